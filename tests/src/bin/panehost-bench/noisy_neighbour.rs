//! The noisy neighbour: how fast a quiet pane still echoes a key, and how
//! fast `list` still answers, while another pane of the same host (tmux
//! server) floods.
//!
//! Each system keeps one quiet pane for the whole benchmark, the echoing
//! program of the echo benchmark at 80x24, and a way to list its panes:
//!
//! - raw PTY: the echoing program in a PTY of the bench's own; the flood in
//!   a second PTY whose master a thread of the bench reads and drops; no
//!   list;
//! - tmux: the echoing program in session `echo`, typed into and read
//!   through a control client attached to that session (as the echo
//!   benchmark does); the flood in a session of its own, which no client
//!   views; `list-panes -a` sent by a second control client, attached to
//!   the server's idle session, timed until its `%end`;
//! - panehost: the echo benchmark's pane and connection (`send`, then the
//!   byte in an `output` event), on a current-thread runtime; the flood in
//!   a pane of the same host, which no client views; `list` on a second
//!   connection.
//!
//! The flood is the flood writer (`flood_writer`) printing one of the
//! kinds of `flood_kinds` in a 1000x250 terminal; a first case, `quiet`,
//! has no flood at all. For each case, one system at a time: the flood
//! starts, runs 250 ms, then the quiet pane takes its echo samples, 2 ms
//! apart, with a `list` after every fourth; then the flood stops. The
//! three systems take turns case by case, in an order that rotates, and
//! every round runs every case on every system. What each system took of
//! its flood (the writer's bytes over the time it ran) is a figure too: a
//! system that takes its flood slower has less of it to handle.

use crate::echo::{PanehostEcho, RawEcho, TmuxEcho};
use crate::flood_kinds::{FloodFile, FloodKind};
use crate::flood_writer;
use crate::host::{sized_shell_pane, PanehostHost};
use crate::raw_pty::RawPty;
use crate::report::{Better, Figure};
use crate::stats::percentile;
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, shell_quote, Bench, BenchResult};
use panehost_client::Client;
use panehost_ipc::{PaneId, Size};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::ChildStdout;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

/// Rounds when `--rounds` is not given.
const DEFAULT_ROUNDS: usize = 3;

/// The flooding pane's size.
const FLOOD_SIZE: Size = Size { cols: 1000, rows: 250 };

/// How long a flood runs before the first sample.
const FLOOD_WARMUP: Duration = Duration::from_millis(250);

/// The pause between two samples, so that the samples spread over the
/// flood.
const SAMPLE_GAP: Duration = Duration::from_millis(2);

/// A `list` is timed after every this many echoes.
const ECHOES_PER_LIST: usize = 4;

/// Untimed echoes (and a quarter as many lists) each system takes before
/// the first case.
const WARMUP_SAMPLES: usize = 20;

/// How long the bench waits for the raw flood's reader to see the end.
const READER_WAIT: Duration = Duration::from_secs(10);

/// What floods beside the quiet pane: nothing, or one kind of flood.
#[derive(Debug, Clone, Copy)]
enum Neighbour {
    Quiet,
    Flood(FloodKind),
}

impl Neighbour {
    fn name(self) -> &'static str {
        match self {
            Neighbour::Quiet => "quiet",
            Neighbour::Flood(kind) => kind.name(),
        }
    }
}

/// What one system measured in one case of one round.
#[derive(Debug, Clone, Default)]
struct Slice {
    /// Echo latencies, in microseconds.
    echo_us: Vec<f64>,
    /// `list` latencies, in microseconds (none for the raw PTY).
    list_us: Vec<f64>,
    /// The flood's bytes the system took, in MB/s (NaN with no flood).
    flood_mb_per_s: f64,
}

/// One system's side: a quiet pane that echoes, a way to list panes, and a
/// flooding neighbour started and stopped on demand.
trait System {
    /// One echo through the quiet pane, in microseconds.
    fn echo(&mut self, byte: u8) -> BenchResult<f64>;
    /// One listing of every pane, in microseconds; `None` where the system
    /// has none.
    fn list(&mut self) -> BenchResult<Option<f64>>;
    /// Starts `argv` as the flooding pane's program, in a terminal of
    /// [`FLOOD_SIZE`].
    fn start_flood(&mut self, argv: &[String]) -> BenchResult<()>;
    /// Ends the flooding pane's program.
    fn stop_flood(&mut self) -> BenchResult<()>;
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let rounds = bench.options.rounds_or(DEFAULT_ROUNDS);
    let samples = (bench.options.samples / 5).max(20);
    let bench_exe = std::env::current_exe()?;
    let mut floods = Vec::new();
    for kind in FloodKind::ALL {
        floods.push(FloodFile::write(kind, &bench.dir)?);
    }
    let neighbours: Vec<Neighbour> =
        std::iter::once(Neighbour::Quiet).chain(FloodKind::ALL.into_iter().map(Neighbour::Flood)).collect();

    let local = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let host = bench.start_host(&[])?;
    let tmux_server = bench.start_tmux(2000)?;
    let mut raw = RawSystem { echo: RawEcho::start()?, flood: None };
    let mut tmux = TmuxSystem::start(&tmux_server)?;
    let mut panehost = PanehostSystem::start(&local, &host)?;
    for system in [&mut raw as &mut dyn System, &mut tmux, &mut panehost] {
        for i in 0..WARMUP_SAMPLES {
            system.echo(b'a' + (i % 26) as u8)?;
            if i % ECHOES_PER_LIST == 0 {
                system.list()?;
            }
        }
    }

    // slices[case][system][round], systems in the order raw, tmux, panehost.
    let mut slices: Vec<[Vec<Slice>; 3]> = neighbours.iter().map(|_| Default::default()).collect();
    let mut started_floods = 0;
    for round in 0..rounds {
        for (case, neighbour) in neighbours.iter().enumerate() {
            for turn in 0..3 {
                let which = (round + case + turn) % 3;
                let system: &mut dyn System = match which {
                    0 => &mut raw,
                    1 => &mut tmux,
                    _ => &mut panehost,
                };
                let flood = match neighbour {
                    Neighbour::Quiet => None,
                    Neighbour::Flood(kind) => {
                        let file = floods.iter().find(|f| f.kind == *kind).ok_or("no file for a flood")?;
                        started_floods += 1;
                        let counter = bench.dir.join(format!("flood-{started_floods}.count"));
                        Some((flood_writer::command(&bench_exe, &file.path, &counter), counter))
                    }
                };
                slices[case][which].push(measure(system, flood, samples)?);
            }
            let [r, t, p] = &slices[case];
            let last = |s: &[Slice], q: f64| percentile(&s[round].echo_us, q);
            progress(&format!(
                "noisy round {}/{rounds}, {}: echo p50/p99 raw {:.0}/{:.0}, tmux {:.0}/{:.0}, panehost {:.0}/{:.0} us",
                round + 1,
                neighbour.name(),
                last(r, 50.0),
                last(r, 99.0),
                last(t, 50.0),
                last(t, 99.0),
                last(p, 50.0),
                last(p, 99.0),
            ));
        }
    }
    panehost.end()?;
    host.stop();
    drop(tmux);
    tmux_server.kill();
    raw.end();

    let mut figures = Vec::new();
    for (case, neighbour) in neighbours.iter().enumerate() {
        figures.extend(case_figures(*neighbour, &slices[case], samples));
    }
    if let Some(first) = figures.first_mut() {
        first.notes.insert(
            0,
            format!(
                "a quiet 80x24 pane echoes ({samples} samples per round, 2 ms apart) while a {}x{} pane of the same \
                 host (tmux server) floods, viewed by no client; one system at a time, in turns",
                FLOOD_SIZE.cols, FLOOD_SIZE.rows
            ),
        );
        first.notes.insert(
            1,
            "tmux: the flood in a session of its own, the echo through a control client of the quiet pane's session; \
             list: panehost `list` on an open connection, tmux `list-panes -a` through a control client"
                .to_owned(),
        );
    }
    Ok(figures)
}

/// One case on one system: starts the flood (if any) and lets it run, takes
/// the samples, stops the flood and works out what it took of it.
fn measure(system: &mut dyn System, flood: Option<(Vec<String>, PathBuf)>, samples: usize) -> BenchResult<Slice> {
    let started = Instant::now();
    if let Some((argv, _)) = &flood {
        system.start_flood(argv)?;
        std::thread::sleep(FLOOD_WARMUP);
    }
    let mut slice = Slice { flood_mb_per_s: f64::NAN, ..Slice::default() };
    for i in 0..samples {
        slice.echo_us.push(system.echo(b'a' + (i % 26) as u8)?);
        if i % ECHOES_PER_LIST == ECHOES_PER_LIST - 1 {
            if let Some(us) = system.list()? {
                slice.list_us.push(us);
            }
        }
        std::thread::sleep(SAMPLE_GAP);
    }
    if let Some((_, counter)) = &flood {
        system.stop_flood()?;
        let seconds = started.elapsed().as_secs_f64();
        slice.flood_mb_per_s = flood_writer::bytes_written(counter) as f64 / 1e6 / seconds;
        let _ = std::fs::remove_file(counter);
    }
    Ok(slice)
}

/// The figures of one case: echo p50 and p99, list p50 and p99, and, with
/// a flood, what each system took of it.
fn case_figures(neighbour: Neighbour, slices: &[Vec<Slice>; 3], samples: usize) -> Vec<Figure> {
    let name = neighbour.name();
    let [raw, tmux, panehost] = slices;
    let per_round = |system: &[Slice], value: &dyn Fn(&Slice) -> f64| system.iter().map(value).collect::<Vec<f64>>();
    let pooled = |system: &[Slice], list: bool, p: f64| {
        let all: Vec<f64> =
            system.iter().flat_map(|s| if list { s.list_us.clone() } else { s.echo_us.clone() }).collect();
        percentile(&all, p)
    };
    let mut figures = Vec::new();
    for p in [50.0, 99.0] {
        let echo = |s: &Slice| percentile(&s.echo_us, p);
        let mut figure = Figure::from_rounds(
            &format!("noisy/{name}/echo-p{p}"),
            "us",
            Better::Lower,
            per_round(panehost, &echo),
            Some(per_round(tmux, &echo)),
            Some(per_round(raw, &echo)),
        );
        if p == 50.0 {
            figure = figure.note(match neighbour {
                Neighbour::Quiet => "no flood: the baseline".to_owned(),
                Neighbour::Flood(kind) => format!("flood: {}", kind.description()),
            });
        }
        figures.push(figure.note(format!(
            "all rounds' {} samples pooled: panehost {:.0}, tmux {:.0}, raw {:.0} us",
            samples * panehost.len(),
            pooled(panehost, false, p),
            pooled(tmux, false, p),
            pooled(raw, false, p)
        )));
    }
    for p in [50.0, 99.0] {
        let list = |s: &Slice| percentile(&s.list_us, p);
        let figure = Figure::from_rounds(
            &format!("noisy/{name}/list-p{p}"),
            "us",
            Better::Lower,
            per_round(panehost, &list),
            Some(per_round(tmux, &list)),
            None,
        );
        figures.push(figure.note(format!(
            "all rounds' {} samples pooled: panehost {:.0}, tmux {:.0} us",
            panehost.iter().map(|s| s.list_us.len()).sum::<usize>(),
            pooled(panehost, true, p),
            pooled(tmux, true, p)
        )));
    }
    if let Neighbour::Flood(_) = neighbour {
        let rate = |s: &Slice| s.flood_mb_per_s;
        figures.push(
            Figure::from_rounds(
                &format!("noisy/{name}/flood"),
                "MB/s",
                Better::Higher,
                per_round(panehost, &rate),
                Some(per_round(tmux, &rate)),
                Some(per_round(raw, &rate)),
            )
            .note("what the system took of the flood while the quiet pane was measured (the writer's bytes)"),
        );
    }
    figures
}

/// The raw PTY's side.
struct RawSystem {
    echo: RawEcho,
    flood: Option<RawFlood>,
}

/// A flood in a PTY of the bench's own, its master read and dropped by a
/// thread until the flood's end. Its program is ended by its pid when the
/// flood is stopped or dropped.
struct RawFlood {
    pty: Option<RawPty>,
    /// Says when the reader has seen the end: the terminal has no writer
    /// left.
    reader_done: mpsc::Receiver<()>,
}

impl RawFlood {
    fn start(argv: &[String]) -> BenchResult<RawFlood> {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let mut pty = RawPty::spawn_sized(&argv, FLOOD_SIZE)?;
        let mut master = std::mem::replace(&mut pty.reader, Box::new(std::io::empty()));
        let (done, reader_done) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match master.read(&mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    // EIO: the writer is gone.
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        });
        Ok(RawFlood { pty: Some(pty), reader_done })
    }

    /// Ends the writer by its pid, then waits for the reader to see the end.
    fn stop(mut self) -> BenchResult<()> {
        if let Some(pty) = self.pty.take() {
            pty.end();
        }
        self.reader_done.recv_timeout(READER_WAIT).map_err(|_| "the raw flood's terminal did not end".into())
    }
}

impl Drop for RawFlood {
    fn drop(&mut self) {
        if let Some(pty) = self.pty.take() {
            pty.end();
        }
    }
}

impl System for RawSystem {
    fn echo(&mut self, byte: u8) -> BenchResult<f64> {
        self.echo.sample(byte)
    }

    fn list(&mut self) -> BenchResult<Option<f64>> {
        Ok(None)
    }

    fn start_flood(&mut self, argv: &[String]) -> BenchResult<()> {
        self.flood = Some(RawFlood::start(argv)?);
        Ok(())
    }

    fn stop_flood(&mut self) -> BenchResult<()> {
        match self.flood.take() {
            Some(flood) => flood.stop(),
            None => Ok(()),
        }
    }
}

impl RawSystem {
    fn end(mut self) {
        let _ = self.stop_flood();
        self.echo.end();
    }
}

/// tmux's side.
struct TmuxSystem<'a> {
    server: &'a TmuxServer,
    echo: TmuxEcho,
    lister: TmuxLister,
    /// The flooding session, while there is one.
    flood: Option<String>,
    floods_started: usize,
}

impl<'a> TmuxSystem<'a> {
    fn start(server: &'a TmuxServer) -> BenchResult<TmuxSystem<'a>> {
        let echo = TmuxEcho::start(server)?;
        let lister = TmuxLister::attach(server)?;
        Ok(TmuxSystem { server, echo, lister, flood: None, floods_started: 0 })
    }
}

impl System for TmuxSystem<'_> {
    fn echo(&mut self, byte: u8) -> BenchResult<f64> {
        self.echo.sample(byte)
    }

    fn list(&mut self) -> BenchResult<Option<f64>> {
        self.lister.sample("list-panes -a").map(Some)
    }

    fn start_flood(&mut self, argv: &[String]) -> BenchResult<()> {
        self.floods_started += 1;
        let session = format!("flood-{}", self.floods_started);
        let words: Vec<String> = argv.iter().map(|word| shell_quote(Path::new(word))).collect();
        self.server.new_session(&session, FLOOD_SIZE, &format!("exec {}", words.join(" ")))?;
        self.flood = Some(session.clone());
        self.server.check_pane_size(&session, FLOOD_SIZE)
    }

    fn stop_flood(&mut self) -> BenchResult<()> {
        if let Some(session) = self.flood.take() {
            self.server.cmd(&["kill-session", "-t", &session])?;
        }
        Ok(())
    }
}

/// A control-mode client attached to the server's idle session (`keep`),
/// which times commands: from sending one until its `%end`.
struct TmuxLister {
    client: ControlClient,
    lines: BufReader<ChildStdout>,
    line: String,
}

impl TmuxLister {
    /// Attaches, and waits for the answer to a first command.
    fn attach(server: &TmuxServer) -> BenchResult<TmuxLister> {
        let mut client = ControlClient::attach(server, "keep")?;
        let lines = BufReader::new(client.take_stdout());
        let mut lister = TmuxLister { client, lines, line: String::new() };
        lister.client.send("display-message -p lister-ready")?;
        while lister.line.trim_end() != "lister-ready" {
            lister.next_line()?;
        }
        lister.read_to_end()?;
        Ok(lister)
    }

    /// Sends `command` and reads its answer; the time, in microseconds.
    fn sample(&mut self, command: &str) -> BenchResult<f64> {
        let started = Instant::now();
        self.client.send(command)?;
        self.read_to_end()?;
        Ok(started.elapsed().as_secs_f64() * 1e6)
    }

    /// Reads until the end of the answer to a command this client sent
    /// (`%end`, or `%error`, whose last field, the flags, is 1). The
    /// attach's own answer has flags 0, and may come after the first
    /// command's.
    fn read_to_end(&mut self) -> BenchResult<()> {
        loop {
            self.next_line()?;
            let fields: Vec<&str> = self.line.split_whitespace().collect();
            match fields.as_slice() {
                ["%end", _, _, "1"] => return Ok(()),
                ["%error", _, _, "1"] => return Err("a tmux command through the control client failed".into()),
                _ => {}
            }
        }
    }

    fn next_line(&mut self) -> BenchResult<()> {
        self.line.clear();
        if self.lines.read_line(&mut self.line)? == 0 {
            return Err("the tmux control client ended".into());
        }
        Ok(())
    }
}

/// panehost's side: every connection on one current-thread runtime, driven
/// by the bench's thread.
struct PanehostSystem<'a> {
    local: &'a Runtime,
    echo: PanehostEcho,
    /// Lists panes, and starts and closes the flooding pane.
    control: Client,
    flood: Option<PaneId>,
}

impl<'a> PanehostSystem<'a> {
    fn start(local: &'a Runtime, host: &PanehostHost) -> BenchResult<PanehostSystem<'a>> {
        let echo = local.block_on(PanehostEcho::start(host))?;
        let control = local.block_on(host.connect())?;
        Ok(PanehostSystem { local, echo, control, flood: None })
    }

    fn end(mut self) -> BenchResult<()> {
        self.stop_flood()?;
        self.local.block_on(self.echo.end())
    }
}

impl System for PanehostSystem<'_> {
    fn echo(&mut self, byte: u8) -> BenchResult<f64> {
        self.local.block_on(self.echo.sample(byte))
    }

    fn list(&mut self) -> BenchResult<Option<f64>> {
        let started = Instant::now();
        self.local.block_on(self.control.list())?;
        Ok(Some(started.elapsed().as_secs_f64() * 1e6))
    }

    fn start_flood(&mut self, argv: &[String]) -> BenchResult<()> {
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let pane = self.local.block_on(self.control.start(sized_shell_pane(&argv, FLOOD_SIZE)))?;
        self.flood = Some(pane.id);
        Ok(())
    }

    fn stop_flood(&mut self) -> BenchResult<()> {
        if let Some(pane) = self.flood.take() {
            self.local.block_on(self.control.close(&pane))?;
        }
        Ok(())
    }
}
