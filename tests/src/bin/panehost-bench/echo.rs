//! Keystroke echo latency: one byte in, the same byte back out, through a
//! program that echoes it itself (`stty raw -echo; cat`), so the terminal
//! driver does no echoing of its own.
//!
//! - raw PTY: the bench writes the byte to the master and reads the master;
//! - tmux: a control-mode client sends `send-keys -H` and reads `%output`;
//! - panehost: one connection sends a `send` request and reads the byte in
//!   an `output` event of its subscription to the pane.
//!
//! The clock runs from just before the byte is written (or the request or
//! command sent) until the byte has been read back. Samples are taken one
//! after the other; the first 50 of each system are a warm-up and dropped.

use crate::host::{shell_pane, PanehostHost};
use crate::raw_pty::{read_until, RawPty};
use crate::report::{Better, Figure};
use crate::stats::percentile;
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, Bench, BenchResult};
use panehost_ipc::{Event, SendParams};
use std::io::{BufRead, BufReader, Write};
use std::time::Instant;

/// Samples taken and dropped before the measured ones.
const WARMUP: usize = 50;

/// The echoing program, which says when it is ready.
const ECHO: &str = "stty raw -echo; printf READY; exec cat";

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let samples = bench.options.samples;
    let raw = raw_pty(samples)?;
    progress(&format!("echo: raw PTY p50 {:.0} us", percentile(&raw, 50.0)));
    let tmux_server = bench.start_tmux(2000)?;
    let tmux = tmux_control(&tmux_server, samples)?;
    tmux_server.kill();
    progress(&format!("echo: tmux control mode p50 {:.0} us", percentile(&tmux, 50.0)));
    let host = bench.start_host(&[])?;
    let panehost = bench.runtime.block_on(panehost(&host, samples))?;
    host.stop();
    progress(&format!("echo: panehost p50 {:.0} us", percentile(&panehost, 50.0)));

    let figure = |p: f64| {
        Figure::single(
            &format!("echo/p{p}"),
            "us",
            Better::Lower,
            percentile(&panehost, p),
            Some(percentile(&tmux, p)),
            Some(percentile(&raw, p)),
        )
    };
    Ok(vec![
        figure(50.0).note(format!("{samples} samples each; tmux: control mode, send-keys then %output")),
        figure(99.0),
    ])
}

fn key(i: usize) -> u8 {
    b'a' + (i % 26) as u8
}

fn raw_pty(samples: usize) -> BenchResult<Vec<f64>> {
    let mut pty = RawPty::spawn(&["sh", "-c", ECHO])?;
    read_until(&mut pty.reader, b"READY")?;
    let mut micros = Vec::with_capacity(samples);
    for i in 0..WARMUP + samples {
        let byte = key(i);
        let started = Instant::now();
        pty.writer.write_all(&[byte])?;
        pty.writer.flush()?;
        read_until(&mut pty.reader, &[byte])?;
        if i >= WARMUP {
            micros.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    pty.end();
    Ok(micros)
}

fn tmux_control(tmux: &TmuxServer, samples: usize) -> BenchResult<Vec<f64>> {
    let command = format!("{} wait-for go-echo; {ECHO}", tmux.inner_tmux());
    tmux.cmd(&["new-session", "-d", "-s", "echo", "-x", "80", "-y", "24", &command])?;
    let mut client = ControlClient::attach(tmux, "echo")?;
    let mut lines = BufReader::new(client.take_stdout());
    let mut line = String::new();
    let mut next_line = |line: &mut String| -> BenchResult<()> {
        line.clear();
        if lines.read_line(line)? == 0 {
            return Err("the tmux control client ended".into());
        }
        Ok(())
    };
    // The client's first line: it is attached.
    next_line(&mut line)?;
    tmux.cmd(&["wait-for", "-S", "go-echo"])?;
    let pane = loop {
        next_line(&mut line)?;
        if line.starts_with("%output ") && line.contains("READY") {
            break line.split_whitespace().nth(1).ok_or("an %output line without a pane")?.to_owned();
        }
    };
    let mut micros = Vec::with_capacity(samples);
    for i in 0..WARMUP + samples {
        let byte = key(i);
        let expected = format!("%output {pane} {}", byte as char);
        let started = Instant::now();
        client.send(&format!("send-keys -t {pane} -H {byte:02x}"))?;
        loop {
            next_line(&mut line)?;
            if line.trim_end() == expected {
                break;
            }
        }
        if i >= WARMUP {
            micros.push(started.elapsed().as_secs_f64() * 1e6);
        }
    }
    drop(client);
    Ok(micros)
}

async fn panehost(host: &PanehostHost, samples: usize) -> BenchResult<Vec<f64>> {
    let client = host.connect().await?;
    let pane = client.start(shell_pane(&["sh", "-c", ECHO])).await?;
    let mut events = client.subscribe(&pane.id, Some(0)).await?;
    let mut seen = Vec::new();
    while !seen.windows(5).any(|w| w == b"READY") {
        match events.next().await {
            Some(Event::Output { data, .. }) => seen.extend_from_slice(data.as_slice()),
            Some(_) => {}
            None => return Err("the pane's subscription ended before READY".into()),
        }
    }
    let mut micros = Vec::with_capacity(samples);
    for i in 0..WARMUP + samples {
        let byte = key(i);
        let started = Instant::now();
        let send = client.send(SendParams { pane: pane.id.clone(), bytes: vec![byte].into(), ..Default::default() });
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
        let echoed_at = echoed?;
        if i >= WARMUP {
            micros.push((echoed_at - started).as_secs_f64() * 1e6);
        }
    }
    drop(events);
    client.close(&pane.id).await?;
    Ok(micros)
}
