//! `panehost attach` and plain `panehost`, end to end, in a real terminal.
//!
//! Each test opens a pseudo-terminal, runs the real binary on its slave side
//! and plays the terminal on the master side: it reads what the command
//! draws and types keys into it, against a real host.

mod support;

use panehost_ipc::{Encoding, PaneDetail, PaneId, PaneState, PaneSummary, Request, Response, Size};
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use support::command::*;
use support::*;

/// The byte the default detach key, Ctrl-\, sends.
const DETACH_KEY: u8 = 0x1c;

// ---------------------------------------------------------------------------
// The terminal
// ---------------------------------------------------------------------------

/// Everything the command has written to the terminal so far.
#[derive(Debug, Default)]
struct Output {
    bytes: Vec<u8>,
    /// The reader has seen the end: no process holds the slave side any more.
    closed: bool,
}

/// Output shared with the thread that reads the master side.
type SharedOutput = Arc<(Mutex<Output>, Condvar)>;

fn lock(output: &Mutex<Output>) -> MutexGuard<'_, Output> {
    output.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A `panehost` command running in a pseudo-terminal that the test plays.
/// The command is killed (by its own pid) and reaped if the test ends while
/// it still runs.
struct Terminal {
    what: String,
    master: Box<dyn MasterPty + Send>,
    writer: Box<dyn Write + Send>,
    child: Option<Box<dyn Child + Send + Sync>>,
    output: SharedOutput,
}

/// The environment the CLI tests give `panehost`, plus the terminal type.
fn command_env(host: &TestHost) -> Vec<(&'static str, String)> {
    vec![
        ("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display())),
        ("HOME", host.home.display().to_string()),
        ("SHELL", "/bin/sh".to_owned()),
        ("LANG", "C.UTF-8".to_owned()),
        ("TERM", "xterm-256color".to_owned()),
    ]
}

fn pty_size(size: Size) -> PtySize {
    PtySize { rows: size.rows, cols: size.cols, pixel_width: 0, pixel_height: 0 }
}

impl Terminal {
    /// Opens a terminal of `size` and runs `panehost --socket S --state-dir D
    /// ARGS...` in it, in the host's home directory.
    fn spawn(host: &TestHost, args: &[&str], size: Size) -> Terminal {
        let what = format!("panehost {}", args.join(" "));
        let pair = native_pty_system().openpty(pty_size(size)).expect("cannot open a pseudo-terminal");
        let mut command = CommandBuilder::new(panehost_bin());
        command.arg("--socket");
        command.arg(&host.socket);
        command.arg("--state-dir");
        command.arg(&host.state_dir);
        command.args(args);
        command.env_clear();
        for (key, value) in command_env(host) {
            command.env(key, value);
        }
        command.cwd(&host.home);
        let child = pair.slave.spawn_command(command).unwrap_or_else(|error| panic!("cannot run {what}: {error}"));
        // From here on only the command holds the slave side, so the reader
        // sees the end once the command has exited.
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let output: SharedOutput = Arc::new((Mutex::new(Output::default()), Condvar::new()));
        let shared = Arc::clone(&output);
        std::thread::Builder::new()
            .name("terminal-reader".into())
            .spawn(move || {
                let mut buffer = [0u8; 8192];
                loop {
                    let read = reader.read(&mut buffer);
                    let (output, changed) = &*shared;
                    let mut output = lock(output);
                    match read {
                        Ok(len) if len > 0 => output.bytes.extend_from_slice(&buffer[..len]),
                        Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                        // End of file, or EIO once the slave side is closed.
                        _ => {
                            output.closed = true;
                            changed.notify_all();
                            return;
                        }
                    }
                    changed.notify_all();
                }
            })
            .unwrap();
        Terminal { what, master: pair.master, writer, child: Some(child), output }
    }

    /// Types `bytes` on the terminal's keyboard.
    fn type_keys(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Resizes the terminal, as a user dragging the window does: the
    /// command's process group gets SIGWINCH.
    fn resize(&self, size: Size) {
        self.master.resize(pty_size(size)).unwrap();
    }

    /// The output so far, as text with escapes visible.
    fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.output.0).bytes).into_owned()
    }

    /// Waits until the output satisfies `done`; fails after [`WAIT`], or as
    /// soon as the terminal has closed without it.
    fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + WAIT;
        let (output, changed) = &*self.output;
        let mut guard = lock(output);
        loop {
            let text = String::from_utf8_lossy(&guard.bytes).into_owned();
            if done(&text) {
                return;
            }
            let now = Instant::now();
            if guard.closed || now >= deadline {
                let why = if guard.closed { "the terminal closed" } else { "timed out" };
                drop(guard);
                panic!("{why} waiting for {what} in the terminal of {}; it shows: {text:?}", self.what);
            }
            guard = changed.wait_timeout(guard, deadline - now).unwrap_or_else(|poisoned| poisoned.into_inner()).0;
        }
    }

    /// Waits until the output contains `needle`.
    fn wait_for(&self, needle: &str) {
        self.wait_until(&format!("{needle:?}"), |text| text.contains(needle));
    }

    /// Waits until the command has drawn something. `attach` writes nothing
    /// before it has switched the terminal to raw mode, so from then on keys
    /// go to the pane rather than to the terminal's line editor.
    fn wait_until_drawn(&self) {
        self.wait_until("the pane to be drawn", |text| !after_host_note(text).is_empty());
    }

    /// Waits up to [`WAIT`] for the command to exit on its own.
    fn wait_for_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            let child = self.child.as_mut().expect("the command is still ours");
            if let Some(status) = child.try_wait().unwrap() {
                self.child = None;
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit within {WAIT:?}; its terminal shows: {:?}",
                self.what,
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if child.try_wait().ok().flatten().is_none() {
                // SIGHUP, then SIGKILL, to this pid only.
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

// ---------------------------------------------------------------------------
// The host, through the protocol
// ---------------------------------------------------------------------------

fn inspect(conn: &mut Connection, pane: &PaneId) -> PaneDetail {
    match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) => detail,
        other => panic!("unexpected {other:?}"),
    }
}

fn list(conn: &mut Connection) -> Vec<PaneSummary> {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes,
        other => panic!("unexpected {other:?}"),
    }
}

/// True when a line of `screen`, without a leading shell prompt, is exactly
/// `wanted`. Typed-ahead input may share a line with a late prompt, but a
/// command's output has a line of its own.
fn shows_line(screen: &str, wanted: &str) -> bool {
    screen.lines().any(|line| {
        let mut line = line.trim_end();
        while let Some(rest) = line.strip_prefix("$ ").or_else(|| line.strip_prefix("# ")) {
            line = rest;
        }
        line == wanted
    })
}

/// Waits until the pane's screen has a line that is exactly `wanted`.
fn wait_for_screen_line(conn: &mut Connection, pane: &PaneId, wanted: &str) -> PaneDetail {
    wait_for(&format!("{pane}'s screen to show {wanted:?}"), || {
        let detail = inspect(conn, pane);
        if shows_line(&detail.screen.text, wanted) {
            Ok(detail)
        } else {
            Err(format!("{:?}", detail.screen.text))
        }
    })
}

/// Waits until the pane's shell has printed its prompt, so that what is
/// typed next is echoed after it.
fn wait_for_prompt(conn: &mut Connection, pane: &PaneId) {
    wait_for(&format!("{pane}'s shell to print its prompt"), || {
        let detail = inspect(conn, pane);
        if detail.pane.offset > 0 && !detail.screen.text.trim().is_empty() {
            Ok(())
        } else {
            Err(format!("offset {}, screen {:?}", detail.pane.offset, detail.screen.text))
        }
    });
}

// ---------------------------------------------------------------------------
// 1-6. Attach, type, resize, detach, reattach, and the pane's exit
// ---------------------------------------------------------------------------

#[test]
fn attach_draws_types_resizes_detaches_reattaches_and_reports_the_exit() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let summary = conn.start(start_params("shell", &[]));
    let pane = summary.id.clone();
    wait_for_prompt(&mut conn, &pane);
    conn.type_line(&pane, "echo before-attach");
    wait_for_screen_line(&mut conn, &pane, "before-attach");

    // 1. Attaching draws the pane's current screen.
    let mut terminal = Terminal::spawn(&host, &["attach", pane.as_str()], Size { cols: 80, rows: 24 });
    terminal.wait_for("before-attach");
    // The host drives the terminal itself (the client handed it over)
    // rather than having the client relay every byte.
    assert!(host.log().contains("terminal attached"), "the terminal was not handed over: {}", host.log());

    // 2. Keys typed on the terminal reach the pane, and its output comes back.
    // The command line as echoed does not contain `typed-12`; its output does.
    terminal.type_keys(b"echo typed-$((3*4))\r");
    wait_for_screen_line(&mut conn, &pane, "typed-12");
    terminal.wait_for("typed-12");

    // 3. The pane follows the terminal's size.
    let bigger = Size { cols: 100, rows: 30 };
    terminal.resize(bigger);
    wait_for("the pane and its screen to become 100x30", || {
        let detail = inspect(&mut conn, &pane);
        if detail.pane.size == bigger && detail.screen.size == bigger {
            Ok(())
        } else {
            Err(format!("pane {}, screen {}", detail.pane.size, detail.screen.size))
        }
    });

    // 4. The detach key ends the attachment, not the pane.
    terminal.type_keys(&[DETACH_KEY]);
    terminal.wait_for(&format!("[detached from {pane}; `panehost attach {pane}` to come back]"));
    let status = terminal.wait_for_exit();
    assert!(status.success(), "attach exited with {status:?} after detaching; terminal: {:?}", terminal.text());
    drop(terminal);
    let detail = inspect(&mut conn, &pane);
    assert_eq!(detail.pane.state, PaneState::Running, "detaching ended the pane");
    assert!(process_exists(summary.pid), "the pane's shell {} is gone after detaching", summary.pid);
    assert!(list(&mut conn).iter().any(|listed| listed.id == pane), "a detached pane is still listed");

    // 5. Attaching again, in a fresh terminal, redraws the screen.
    let mut terminal = Terminal::spawn(&host, &["attach", pane.as_str()], bigger);
    terminal.wait_for("typed-12");
    terminal.wait_for("before-attach");

    // 6. The pane's exit ends the attachment and says how the pane ended.
    terminal.type_keys(b"exit 3\r");
    terminal.wait_for(&format!("[{pane} exited with code 3]"));
    let status = terminal.wait_for_exit();
    assert!(status.success(), "attach exited with {status:?} after the pane ended; terminal: {:?}", terminal.text());
    drop(terminal);
    let listed = list(&mut conn).into_iter().find(|listed| listed.id == pane).expect("an exited pane stays listed");
    assert!(matches!(&listed.state, PaneState::Exited(status) if status.code == 3), "{listed:?}");

    conn.ok(Request::Close { pane });
    host.stop();
}

// ---------------------------------------------------------------------------
// 7. Plain `panehost`
// ---------------------------------------------------------------------------

#[test]
fn plain_panehost_starts_a_shell_pane_and_attaches_to_it() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let before = list(&mut conn);

    let size = Size { cols: 90, rows: 25 };
    let mut terminal = Terminal::spawn(&host, &[], size);
    let started = wait_for("a new pane in the list", || {
        let panes = list(&mut conn);
        let new: Vec<_> = panes.iter().filter(|pane| !before.iter().any(|old| old.id == pane.id)).cloned().collect();
        match new.as_slice() {
            [pane] => Ok((pane.clone(), panes.len())),
            _ => Err(format!("{panes:?}")),
        }
    });
    let (summary, count) = started;
    assert_eq!(count, before.len() + 1, "one more pane");
    assert_eq!(summary.runtime, "shell", "{summary:?}");
    assert_eq!(summary.state, PaneState::Running, "{summary:?}");
    assert_eq!(summary.size, size, "the pane starts at the terminal's size: {summary:?}");
    assert_eq!(summary.cwd, host.home.display().to_string(), "the pane starts in the current directory");
    let pane = summary.id.clone();

    terminal.wait_until_drawn();
    wait_for_prompt(&mut conn, &pane);
    terminal.type_keys(b"echo fresh-pane\r");
    wait_for_screen_line(&mut conn, &pane, "fresh-pane");
    // Once as the echoed command line, once as its output.
    terminal.wait_until("\"fresh-pane\" twice", |text| text.matches("fresh-pane").count() >= 2);

    terminal.type_keys(&[DETACH_KEY]);
    terminal.wait_for(&format!("[detached from {pane}; `panehost attach {pane}` to come back]"));
    let status = terminal.wait_for_exit();
    assert!(status.success(), "panehost exited with {status:?} after detaching; terminal: {:?}", terminal.text());
    drop(terminal);
    assert_eq!(inspect(&mut conn, &pane).pane.state, PaneState::Running, "detaching ended the pane");
    assert_eq!(list(&mut conn).len(), before.len() + 1);

    conn.ok(Request::Close { pane });
    host.stop();
}

/// Plain `panehost` with no host running starts one, from the very
/// terminal it then hands over: that host must run in a session of its
/// own, without a controlling terminal (the kernel would stop a host that
/// read its own controlling terminal from a background process group), and
/// take the terminal.
#[test]
fn a_host_started_from_the_terminal_runs_in_a_session_of_its_own_and_takes_the_terminal() {
    let mut host = TestHost::start();
    host.kill_hard();
    // Declared before the terminal, so dropped after it: the host the
    // terminal's command starts is stopped however the test ends.
    let _stops_the_host = StopsTheHost(&host);
    let mut terminal = Terminal::spawn(&host, &[], Size { cols: 90, rows: 25 });
    // The command says that it started a host, then attaches.
    terminal.wait_for("panehost: started a host");
    terminal.wait_until_drawn();
    terminal.type_keys(b"echo from-$((2+3))\r");
    terminal.wait_for("from-5");

    let conn = host.connect(Encoding::Json);
    let started = rustix::net::sockopt::socket_peercred(&conn.stream).unwrap().pid.as_raw_nonzero().get();
    drop(conn);
    // Fields after the command name: state, ppid, pgrp, session, tty_nr.
    let stat = std::fs::read_to_string(format!("/proc/{started}/stat")).unwrap();
    let fields: Vec<&str> = stat.rsplit_once(')').unwrap().1.split_whitespace().collect();
    assert_eq!(fields[3], started.to_string(), "the host leads a session of its own: {stat}");
    assert_eq!(fields[4], "0", "the host has no controlling terminal: {stat}");
    let log = std::fs::read_to_string(host.state_dir.join("host.log")).unwrap_or_default();
    assert!(log.contains("terminal attached"), "the terminal was not handed over: {log}");

    terminal.type_keys(&[DETACH_KEY]);
    terminal.wait_for("[detached from");
    assert!(terminal.wait_for_exit().success(), "{:?}", terminal.text());
}

/// The output after the note a command writes when it starts a host in the
/// background (`panehost: started a host ...`), which comes before the
/// command attaches: all of it when there is no such note.
fn after_host_note(text: &str) -> &str {
    if !text.starts_with("panehost: started a host") {
        return text;
    }
    match text.split_once("ends it") {
        Some((_, rest)) => rest.trim_start_matches(['\r', '\n']),
        None => "",
    }
}

/// Stops, with its panes, the host serving a test host's socket (one a
/// command started there), when dropped.
struct StopsTheHost<'a>(&'a TestHost);

impl Drop for StopsTheHost<'_> {
    fn drop(&mut self) {
        let host = self.0;
        let stopped = std::process::Command::new(panehost_bin())
            .arg("--socket")
            .arg(&host.socket)
            .arg("--state-dir")
            .arg(&host.state_dir)
            .args(["stop", "--close-panes"])
            .env("HOME", &host.home)
            .output();
        if !std::thread::panicking() {
            let stopped = stopped.unwrap();
            assert!(stopped.status.success(), "{stopped:?}");
        }
    }
}

// ---------------------------------------------------------------------------
// 8. No terminal
// ---------------------------------------------------------------------------

/// Runs `panehost ARGS...` with standard input not a terminal; returns its
/// exit code and standard error.
fn run_without_terminal(host: &TestHost, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(panehost_bin())
        .arg("--socket")
        .arg(&host.socket)
        .arg("--state-dir")
        .arg(&host.state_dir)
        .args(args)
        .env_clear()
        .envs(command_env(host))
        .current_dir(&host.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("panehost {args:?} without a terminal did not exit within {WAIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status.code(), reader.join().unwrap())
}

#[test]
fn attach_and_plain_panehost_refuse_to_run_without_a_terminal() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &[])).id;

    let (code, stderr) = run_without_terminal(&host, &["attach", pane.as_str()]);
    assert_eq!(code, Some(2), "attach without a terminal: {stderr}");
    assert!(stderr.contains("terminal"), "the message says a terminal is needed: {stderr:?}");
    let detail = inspect(&mut conn, &pane);
    assert_eq!(detail.pane.state, PaneState::Running);
    assert_eq!(detail.pane.size, Size::DEFAULT, "the refused attach resized the pane");

    let (code, stderr) = run_without_terminal(&host, &[]);
    assert_eq!(code, Some(2), "plain panehost without a terminal: {stderr}");
    assert!(stderr.contains("terminal"), "the message says a terminal is needed: {stderr:?}");
    assert_eq!(list(&mut conn).len(), 1, "plain panehost without a terminal started a pane");

    conn.ok(Request::Close { pane });
    host.stop();
}
