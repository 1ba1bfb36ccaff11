//! `panehost-bench`: panehost measured side by side with tmux and a raw
//! PTY in the same run, each figure printed with panehost's ratio to both.
//!
//! ```text
//! panehost-bench [--rounds N] [--only NAME[,NAME...]] [--json]
//!                [--panehost PATH] [--payload-mib N] [--samples N] [--panes N]
//! ```
//!
//! Benchmarks, in the order they run: `drain`, `drain-sizes`, `echo`,
//! `attach`, `start`, `memory`, `panes`, `reconnect`, `stalled`, `noisy`.
//! docs/PERFORMANCE.md says what each does.
//!
//! `panehost-bench flood-writer FILE COUNTER` runs the bench as the
//! program of a flooding pane (see `flood_writer`), for the `noisy`
//! benchmark.
//!
//! The bench starts its own `panehost host` (the `panehost` binary next to
//! this one unless `--panehost` names another) with a socket and state
//! directory in a temp directory, and its own tmux servers, each on its own
//! `-L` socket name with no configuration file. It ends each of them by its
//! own pid (tmux with `kill-server` first) and removes the temp directory.
//!
//! Benchmarks are not tests: nothing here asserts on time. Progress goes to
//! stderr, figures to stdout.

mod attach;
mod drain;
mod drain_sizes;
mod echo;
mod flood_kinds;
mod flood_writer;
mod follow;
mod host;
mod many_panes;
mod memory;
mod noisy_neighbour;
mod payload;
mod plain_client;
mod raw_pty;
mod reconnect;
mod report;
mod stalled;
mod start;
mod start_burst;
mod stats;
mod tmux;

use host::PanehostHost;
use payload::Payload;
use report::Figure;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;
use tmux::TmuxServer;

/// Every fallible step of the bench.
pub type BenchResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The benchmarks, in the order they run.
const BENCHMARKS: &[&str] =
    &["drain", "drain-sizes", "echo", "attach", "start", "memory", "panes", "reconnect", "stalled", "noisy"];

const USAGE: &str = "usage: panehost-bench [--rounds N] [--only NAME[,NAME...]] [--json] [--panehost PATH]
                      [--payload-mib N] [--samples N] [--panes N]

  --rounds N       rounds of the drain, stalled-client and starts-at-once benchmarks
                   (default 5), and of drain-sizes and noisy (default 3)
  --only NAMES     run only these, comma-separated: drain, drain-sizes, echo, attach, start,
                   memory, panes, reconnect, stalled, noisy
  --json           print the figures as one JSON document instead of lines
  --panehost PATH  the panehost binary (default: the one next to this binary)
  --payload-mib N  size of the drain payload in MiB (default 64)
  --samples N      keystroke echo samples per system (default 1000; a tenth of it, at least 20,
                   pane starts; a fifth of it, at least 20, per round and flood in noisy)
  --panes N        panes of the many-panes benchmark (default 1000)";

/// The command line.
#[derive(Debug, Clone)]
pub struct Options {
    pub rounds: usize,
    /// Whether `--rounds` was given (benchmarks with a default of their own
    /// keep it otherwise).
    pub rounds_given: bool,
    pub only: Vec<String>,
    pub json: bool,
    pub panehost: Option<PathBuf>,
    pub payload_mib: u64,
    pub samples: usize,
    pub panes: usize,
}

impl Options {
    fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut options = Options {
            rounds: 5,
            rounds_given: false,
            only: Vec::new(),
            json: false,
            panehost: None,
            payload_mib: 64,
            samples: 1000,
            panes: 1000,
        };
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = || inline.clone().or_else(|| args.next()).ok_or(format!("{flag} needs a value"));
            let number = |text: String| {
                text.parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or(format!("{flag}: {text:?} is not a positive number"))
            };
            match flag.as_str() {
                "--rounds" => {
                    options.rounds = number(value()?)?;
                    options.rounds_given = true;
                }
                "--only" => {
                    for name in value()?.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                        if !BENCHMARKS.contains(&name) {
                            return Err(format!("--only: no benchmark is called {name:?}"));
                        }
                        options.only.push(name.to_owned());
                    }
                }
                "--json" => options.json = true,
                "--panehost" => options.panehost = Some(PathBuf::from(value()?)),
                "--payload-mib" => options.payload_mib = number(value()?)? as u64,
                "--samples" => options.samples = number(value()?)?,
                "--panes" => options.panes = number(value()?)?,
                "--help" | "-h" => return Err(String::new()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        Ok(options)
    }

    /// The rounds `--rounds` gives, or `default` when it was not given.
    pub fn rounds_or(&self, default: usize) -> usize {
        if self.rounds_given {
            self.rounds
        } else {
            default
        }
    }

    fn wants(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|n| n == name)
    }
}

/// What every benchmark needs: options, a temp directory, the payload, an
/// async runtime for the client library, and fresh hosts and tmux servers
/// on demand.
#[derive(Debug)]
pub struct Bench {
    pub options: Options,
    pub dir: PathBuf,
    pub payload: Payload,
    pub runtime: tokio::runtime::Runtime,
    pub panehost_bin: PathBuf,
    started: Cell<u32>,
}

impl Bench {
    /// A fresh `panehost host` with default settings plus `env`.
    pub fn start_host(&self, env: &[(&str, String)]) -> BenchResult<PanehostHost> {
        let n = self.next();
        PanehostHost::start(&self.panehost_bin, &self.dir.join(format!("host-{n}")), env)
    }

    /// A fresh tmux server with `history-limit` lines of history.
    pub fn start_tmux(&self, history_limit: u32) -> BenchResult<TmuxServer> {
        let n = self.next();
        TmuxServer::start(&format!("panehost-bench-{}-{n}", std::process::id()), history_limit)
    }

    /// Writes a shell script into the temp directory; returns its path.
    pub fn script(&self, name: &str, body: &str) -> BenchResult<PathBuf> {
        let path = self.dir.join(name);
        std::fs::write(&path, body)?;
        Ok(path)
    }

    fn next(&self) -> u32 {
        let n = self.started.get() + 1;
        self.started.set(n);
        n
    }
}

/// Prints progress on stderr.
pub fn progress(message: &str) {
    eprintln!("[bench] {message}");
}

/// Removes the temp directory when the bench ends, however it ends.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some(flood_writer::MODE) {
        // It ends when its terminal does: a failed write is its normal end.
        return match flood_writer::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("panehost-bench {}: {error}", flood_writer::MODE);
                ExitCode::FAILURE
            }
        };
    }
    let options = match Options::parse(args.into_iter()) {
        Ok(options) => options,
        Err(message) => {
            if message.is_empty() {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            eprintln!("panehost-bench: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("panehost-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: Options) -> BenchResult<()> {
    let panehost_bin = match &options.panehost {
        Some(path) => path.clone(),
        None => std::env::current_exe()?.parent().ok_or("the bench's own path has no directory")?.join("panehost"),
    };
    // Absolute: children started in other directories run it too.
    let panehost_bin = std::fs::canonicalize(&panehost_bin).unwrap_or(panehost_bin);
    if !panehost_bin.is_file() {
        return Err(format!(
            "{} is missing: build it first (see docs/PERFORMANCE.md) or pass --panehost PATH",
            panehost_bin.display()
        )
        .into());
    }
    check_tmux()?;
    let dir = std::env::temp_dir().join(format!("panehost-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let _cleanup = TempDir(dir.clone());

    let started = Instant::now();
    let load_average_at_start = load_average();
    progress(&format!("writing a {} MiB payload", options.payload_mib));
    let payload = Payload::generate(&dir.join("payload.txt"), options.payload_mib * 1024 * 1024)?;
    // Read it once so that every system reads it from the page cache.
    std::fs::read(&payload.path)?;

    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let bench = Bench { options: options.clone(), dir, payload, runtime, panehost_bin, started: Cell::new(0) };

    if !options.json {
        println!(
            "panehost-bench: {} round(s), {} MiB payload, {} CPUs, {}, load average {}",
            options.rounds,
            options.payload_mib,
            cpus(),
            tmux_version(),
            load_average()
        );
        println!("each figure: panehost, then tmux and the raw PTY with panehost's ratio to each (panehost / other)");
    }
    let mut figures: Vec<Figure> = Vec::new();
    for name in BENCHMARKS.iter().filter(|name| options.wants(name)) {
        progress(&format!("{name}: running"));
        let result = match *name {
            "drain" => drain::run(&bench),
            "drain-sizes" => drain_sizes::run(&bench),
            "echo" => echo::run(&bench),
            "attach" => attach::run(&bench),
            "start" => start::run(&bench).and_then(|mut figures| {
                figures.extend(start_burst::run(&bench)?);
                Ok(figures)
            }),
            "memory" => memory::run(&bench),
            "panes" => many_panes::run(&bench),
            "reconnect" => reconnect::run(&bench),
            "stalled" => stalled::run(&bench),
            "noisy" => noisy_neighbour::run(&bench),
            _ => unreachable!("names are checked when parsed"),
        };
        match result {
            Ok(new) => {
                if !options.json {
                    for figure in &new {
                        println!("{}", figure.to_text());
                    }
                }
                figures.extend(new);
            }
            Err(error) => return Err(format!("{name}: {error}").into()),
        }
    }
    if options.json {
        let figures: Vec<_> = figures.iter().map(Figure::to_json).collect();
        let document = serde_json::json!({
            "rounds": options.rounds,
            "payload_bytes": bench.payload.len,
            "cpus": cpus(),
            "tmux": tmux_version(),
            "load_average_at_start": load_average_at_start,
            "figures": figures,
        });
        println!("{}", serde_json::to_string_pretty(&document)?);
    }
    progress(&format!("done in {:.0} s; load average now {}", started.elapsed().as_secs_f64(), load_average()));
    Ok(())
}

fn check_tmux() -> BenchResult<()> {
    match std::process::Command::new("tmux").arg("-V").output() {
        Ok(output) if output.status.success() => Ok(()),
        _ => Err("tmux is not installed: the bench compares panehost with it (apt-get install tmux)".into()),
    }
}

fn cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
}

/// The 1, 5 and 15 minute load averages: how busy the machine was.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn tmux_version() -> String {
    std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// `path` as a shell word, single-quoted.
pub fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}
