//! Keystroke echo latency: one byte in, the same byte back out, through a
//! program that echoes it itself (`stty raw -echo; cat`), so the terminal
//! driver does no echoing of its own.
//!
//! - raw PTY: the bench writes the byte to the master and reads the master;
//! - tmux: a control-mode client sends `send-keys -H` and reads `%output`;
//! - panehost: one connection sends a `send` request and reads the byte in
//!   an `output` event of its subscription to the pane, through
//!   `panehost-client` on a current-thread runtime (as the `panehost`
//!   command runs it); in notes, the same from outside a multi-thread
//!   runtime (`block_on`, the connection's tasks on its workers), and, to
//!   tell the host's share from the client library's, through a plain
//!   blocking socket client.
//!
//! The clock runs from just before the byte is written (or the request or
//! command sent) until the byte has been read back. The systems take
//! turns, one sample each, so that whatever else the machine does falls on
//! all of them alike. The first 50 samples of each are a warm-up and dropped.

use crate::host::{shell_pane, PanehostHost};
use crate::plain_client::PlainClient;
use crate::raw_pty::{read_until, RawPty};
use crate::report::{Better, Figure};
use crate::stats::percentile;
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, Bench, BenchResult};
use panehost_client::{Client, EventStream};
use panehost_ipc::{Event, PaneId, Request, Response, SendParams, ServerMessage};
use std::io::{BufRead, BufReader, Write};
use std::process::ChildStdout;
use std::time::Instant;

/// Samples taken and dropped before the measured ones.
const WARMUP: usize = 50;

/// The echoing program, which says when it is ready.
const ECHO: &str = "stty raw -echo; printf READY; exec cat";

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let samples = bench.options.samples;
    let mut raw = RawEcho::start()?;
    let tmux_server = bench.start_tmux(2000)?;
    let mut tmux = TmuxEcho::start(&tmux_server)?;
    let host = bench.start_host(&[])?;
    // The library as the `panehost` command runs it: a current-thread
    // runtime, driven by the calling thread.
    let local = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut panehost = local.block_on(PanehostEcho::start(&host))?;
    // And from outside a multi-thread runtime, whose workers run the
    // connection's tasks.
    let mut threaded = bench.runtime.block_on(PanehostEcho::start(&host))?;
    let mut plain = PlainEcho::start(&host)?;

    let (mut raw_us, mut tmux_us, mut panehost_us, mut threaded_us, mut plain_us) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARMUP + samples {
        let byte = b'a' + (i % 26) as u8;
        let r = raw.sample(byte)?;
        let t = tmux.sample(byte)?;
        let p = local.block_on(panehost.sample(byte))?;
        let m = bench.runtime.block_on(threaded.sample(byte))?;
        let q = plain.sample(byte)?;
        if i >= WARMUP {
            raw_us.push(r);
            tmux_us.push(t);
            panehost_us.push(p);
            threaded_us.push(m);
            plain_us.push(q);
        }
    }
    progress(&format!(
        "echo: p50 raw {:.0} us, tmux {:.0} us, panehost {:.0} us",
        percentile(&raw_us, 50.0),
        percentile(&tmux_us, 50.0),
        percentile(&panehost_us, 50.0)
    ));
    local.block_on(panehost.end())?;
    bench.runtime.block_on(threaded.end())?;
    plain.end()?;
    host.stop();
    drop(tmux);
    tmux_server.kill();
    raw.end();

    let figure = |p: f64| {
        Figure::single(
            &format!("echo/p{p}"),
            "us",
            Better::Lower,
            percentile(&panehost_us, p),
            Some(percentile(&tmux_us, p)),
            Some(percentile(&raw_us, p)),
        )
    };
    let notes = |p: f64| {
        [
            format!(
                "panehost-client from outside a two-worker runtime (block_on) instead: {:.0} us",
                percentile(&threaded_us, p)
            ),
            format!(
                "panehost through a plain blocking socket client instead of panehost-client: {:.0} us",
                percentile(&plain_us, p)
            ),
        ]
    };
    let [threaded_50, plain_50] = notes(50.0);
    let [threaded_99, plain_99] = notes(99.0);
    Ok(vec![
        figure(50.0)
            .note(format!(
                "{samples} samples each, taken in turns; tmux: control mode, send-keys then %output; \
                 panehost: panehost-client on a current-thread runtime"
            ))
            .note(threaded_50)
            .note(plain_50),
        figure(99.0).note(threaded_99).note(plain_99),
    ])
}

fn micros_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e6
}

/// The echoing program in a raw PTY of the bench's own.
pub struct RawEcho {
    pty: RawPty,
}

impl RawEcho {
    /// Starts the program and waits until it is ready.
    pub fn start() -> BenchResult<RawEcho> {
        let mut pty = RawPty::spawn(&["sh", "-c", ECHO])?;
        read_until(&mut pty.reader, b"READY")?;
        Ok(RawEcho { pty })
    }

    /// One echo, in microseconds.
    pub fn sample(&mut self, byte: u8) -> BenchResult<f64> {
        let started = Instant::now();
        self.pty.writer.write_all(&[byte])?;
        self.pty.writer.flush()?;
        read_until(&mut self.pty.reader, &[byte])?;
        Ok(micros_since(started))
    }

    /// Ends the program by its pid.
    pub fn end(self) {
        self.pty.end();
    }
}

/// The echoing program in a tmux session `echo`, typed into and read
/// through a control-mode client attached to that session.
pub struct TmuxEcho {
    client: ControlClient,
    lines: BufReader<ChildStdout>,
    line: String,
    pane: String,
}

impl TmuxEcho {
    /// Starts the session and its client and waits until the program is
    /// ready.
    pub fn start(tmux: &TmuxServer) -> BenchResult<TmuxEcho> {
        let command = format!("{} wait-for go-echo; {ECHO}", tmux.inner_tmux());
        tmux.cmd(&["new-session", "-d", "-s", "echo", "-x", "80", "-y", "24", &command])?;
        let mut client = ControlClient::attach(tmux, "echo")?;
        let lines = BufReader::new(client.take_stdout());
        let mut echo = TmuxEcho { client, lines, line: String::new(), pane: String::new() };
        // The client's first line: it is attached.
        echo.next_line()?;
        tmux.cmd(&["wait-for", "-S", "go-echo"])?;
        loop {
            echo.next_line()?;
            if echo.line.starts_with("%output ") && echo.line.contains("READY") {
                echo.pane = echo.line.split_whitespace().nth(1).ok_or("an %output line without a pane")?.to_owned();
                return Ok(echo);
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

    /// One echo, in microseconds.
    pub fn sample(&mut self, byte: u8) -> BenchResult<f64> {
        let expected = format!("%output {} {}", self.pane, byte as char);
        let started = Instant::now();
        self.client.send(&format!("send-keys -t {} -H {byte:02x}", self.pane))?;
        loop {
            self.next_line()?;
            if self.line.trim_end() == expected {
                return Ok(micros_since(started));
            }
        }
    }
}

/// The echoing program in a panehost pane, typed into with `send` and read
/// through a subscription, both on one connection.
pub struct PanehostEcho {
    client: Client,
    events: EventStream,
    pane: PaneId,
}

impl PanehostEcho {
    /// Starts the pane, subscribes, and waits until the program is ready.
    pub async fn start(host: &PanehostHost) -> BenchResult<PanehostEcho> {
        let client = host.connect().await?;
        let pane = client.start(shell_pane(&["sh", "-c", ECHO])).await?.id;
        let mut events = client.subscribe(&pane, Some(0)).await?;
        let mut seen = Vec::new();
        while !seen.windows(5).any(|w| w == b"READY") {
            match events.next().await {
                Some(Event::Output { data, .. }) => seen.extend_from_slice(data.as_slice()),
                Some(_) => {}
                None => return Err("the pane's subscription ended before READY".into()),
            }
        }
        Ok(PanehostEcho { client, events, pane })
    }

    /// Sends the byte and reads events until it comes back; the answer to
    /// the `send` request and the echo may arrive in either order.
    pub async fn sample(&mut self, byte: u8) -> BenchResult<f64> {
        let started = Instant::now();
        let send =
            self.client.send(SendParams { pane: self.pane.clone(), bytes: vec![byte].into(), ..Default::default() });
        let events = &mut self.events;
        let echo = async {
            loop {
                match events.next().await {
                    Some(Event::Output { data, .. }) if data.as_slice().contains(&byte) => return Ok(Instant::now()),
                    Some(_) => {}
                    None => return Err("the pane's subscription ended"),
                }
            }
        };
        let (sent, echoed) = tokio::join!(send, echo);
        sent?;
        Ok((echoed? - started).as_secs_f64() * 1e6)
    }

    /// Closes the pane.
    pub async fn end(self) -> BenchResult<()> {
        drop(self.events);
        self.client.close(&self.pane).await?;
        Ok(())
    }
}

struct PlainEcho {
    client: PlainClient,
    pane: PaneId,
    subscription: u64,
}

impl PlainEcho {
    fn start(host: &PanehostHost) -> BenchResult<PlainEcho> {
        let mut client = PlainClient::connect(&host.socket)?;
        let pane = match client.request(Request::Start(shell_pane(&["sh", "-c", ECHO])))? {
            Response::Started(pane) => pane.id,
            other => return Err(format!("start answered {other:?}").into()),
        };
        let subscription = match client.request(Request::Events { pane: pane.clone(), from: Some(0) })? {
            Response::Subscribed(subscription) => subscription.subscription,
            other => return Err(format!("events answered {other:?}").into()),
        };
        let mut echo = PlainEcho { client, pane, subscription };
        let mut seen = Vec::new();
        while !seen.windows(5).any(|w| w == b"READY") {
            if let Some(data) = echo.output()? {
                seen.extend_from_slice(&data);
            }
        }
        Ok(echo)
    }

    /// The data of the next message when it is output of the subscription.
    fn output(&mut self) -> BenchResult<Option<Vec<u8>>> {
        Ok(match self.client.read()? {
            ServerMessage::Event { subscription, event: Event::Output { data, .. } }
                if subscription == self.subscription =>
            {
                Some(data.into_vec())
            }
            _ => None,
        })
    }

    /// Sends the byte and reads until it comes back (the `sent` answer may
    /// come before or after it).
    fn sample(&mut self, byte: u8) -> BenchResult<f64> {
        let started = Instant::now();
        self.client.send(Request::Send(SendParams {
            pane: self.pane.clone(),
            bytes: vec![byte].into(),
            ..Default::default()
        }))?;
        loop {
            if let Some(data) = self.output()? {
                if data.contains(&byte) {
                    return Ok(micros_since(started));
                }
            }
        }
    }

    fn end(mut self) -> BenchResult<()> {
        self.client.request(Request::Close { pane: self.pane.clone() })?;
        Ok(())
    }
}
