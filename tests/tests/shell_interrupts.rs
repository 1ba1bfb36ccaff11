//! Interrupts of a bash with prompt marks, at every moment a client
//! brings them: while a command runs, just as it ends, at the prompt,
//! right after a start or a submission, twice in a row; and what comes
//! after them (the next command arrives whole).

mod support;

use panehost_ipc::{Encoding, Event, Request, Response, SendParams};
use support::bash::{ask, bash_host};
use support::command::wait_for;
use support::*;

/// Runs `command` at the prompt, interrupts it once `sleep` holds the
/// terminal (a Ctrl-C that reaches bash while it is still starting the
/// command is the second test's case), and checks the interrupt's outcome
/// and that the prompt's mark ended the turn with the signal's status.
fn interrupt_at_the_prompt(command: &str, outcome: &str) {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let started = conn.start(start_params("shell", &[]));
    let pane = started.id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    conn.type_line(&pane, command);
    wait_until_in_the_foreground(started.pid, "sleep");
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false }) else {
        panic!()
    };
    assert_eq!(report.outcome, outcome, "{report:?}");
    conn.follow_until(subscription, &mut seen, |seen| {
        seen.events.iter().any(|event| matches!(event, Event::TurnCompleted { .. }))
    });
    let ended = seen.events.iter().find(|event| matches!(event, Event::TurnCompleted { .. })).unwrap();
    assert!(
        matches!(ended, Event::TurnCompleted { source, exit_code: Some(130), .. } if source == "shell_integration"),
        "{ended:?}"
    );
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn an_interrupted_command_ends_its_turn_with_the_signal_status() {
    interrupt_at_the_prompt("sleep 100", "turn_cancelled");
}

/// A command the keys do not stop (here one that turned the terminal's
/// signal keys off) runs on in silence: quiet output is no proof with
/// prompt marks, so the stop escalates to SIGINT (the outcome says so),
/// and the prompt's mark ends the turn with the signal's status.
#[test]
fn a_command_the_keys_do_not_stop_is_not_called_stopped_until_its_prompt_returns() {
    interrupt_at_the_prompt("stty -isig; sleep 100", "process_interrupted");
}

/// An ask right after an interrupt at an idle prompt reaches bash whole:
/// the interrupt waits for the prompt to be drawn again. Before, the
/// next command lost its first byte to the line being reset
/// ("bash: rintf: command not found"; found by the schedule explorer).
#[test]
fn an_ask_right_after_an_interrupt_at_the_prompt_arrives_whole() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    for round in 0..5 {
        // Both at once, as a client that does not wait for the first.
        conn.send(Request::Interrupt { pane: pane.clone(), terminate: false });
        let text = format!("printf 'whole-%s\\n' {round}");
        let asked = conn.send(Request::Ask { pane: pane.clone(), text, timeout_ms: Some(20_000) });
        let report = loop {
            let (id, answer) = conn.next_answer();
            if id == asked {
                match answer {
                    Ok(Response::Answered(report)) => break report,
                    other => panic!("{other:?}"),
                }
            }
        };
        assert_eq!(report.exit_code, Some(0), "{report:?}");
        assert!(report.added_text.contains(&format!("whole-{round}")), "{report:?}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// An interrupt sent while bash still reads its startup file waits for
/// its first prompt, as a submission does: the startup file (and its
/// prompt marks) is not cut short, and the next ask is answered by its
/// command's own mark. Before, every later ask waited for marks that
/// never came (found by the schedule explorer).
#[test]
fn an_interrupt_right_after_start_leaves_the_startup_file_whole() {
    let host = bash_host();
    std::fs::write(host.home.join(".bashrc"), "sleep 0.3\nPS1='ready> '\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false });
    let report = ask(&mut conn, &pane, "(exit 6)");
    assert_eq!((report.source.as_str(), report.exit_code), ("shell_integration", Some(6)), "{report:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A submitted line then an interrupt, sent together as a client that does
/// not wait: the Ctrl-C reaches the command the line started, never the
/// line itself. Sent before bash has read the line, the terminal acts on
/// it at once and throws away the input still unread, so a cut line ran
/// (`bash: rintf: command not found`, then the rest of it; found by the
/// schedule explorer, seed 11084060507942040464).
#[test]
fn an_interrupt_right_after_a_submitted_line_stops_its_command_not_the_line() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    for round in 0..12 {
        let text = format!("printf 'began-%s\\n' {round}; sleep 5; printf 'ended-%s\\n' {round}");
        let send = SendParams { pane: pane.clone(), text, enter: true, ..Default::default() };
        let sent = conn.send(Request::Send(send));
        let interrupted = conn.send(Request::Interrupt { pane: pane.clone(), terminate: false });
        for _ in 0..2 {
            let (id, answer) = conn.next_answer();
            assert!(id == sent || id == interrupted, "{id}");
            answer.unwrap_or_else(|err| panic!("{err:?}"));
        }
        let completed =
            |seen: &Transcript| seen.events.iter().filter(|event| matches!(event, Event::TurnCompleted { .. })).count();
        conn.follow_until(subscription, &mut seen, |seen| completed(seen) > round);
        let ended = seen.events.iter().rev().find(|event| matches!(event, Event::TurnCompleted { .. })).unwrap();
        assert!(matches!(ended, Event::TurnCompleted { exit_code: Some(130), .. }), "round {round}: {ended:?}");
        let text = seen.text();
        // The whole line reached bash, which ran its commands until the
        // Ctrl-C (right after bash took the line, before its first command
        // printed, is fine too), never a line cut short.
        assert!(!text.contains("command not found"), "round {round}:\n{text}");
        assert_eq!(text.matches("\x1b]133;C").count(), round + 1, "round {round}: bash took each line:\n{text}");
        assert!(text.matches(&format!("began-{round}\r\n")).count() <= 1, "round {round}:\n{text}");
        assert!(!text.contains(&format!("ended-{round}")), "round {round}:\n{text}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// Two interrupts in a row while a command runs, then an ask, all sent at
/// once: the first stops the command, and what was sent after it meets
/// bash once the command has ended. Before, the first let go of the input
/// line as soon as its keys were written: the ask was refused
/// `TURN_IN_PROGRESS` (this test, round 0), and the second Ctrl-C could
/// find bash between commands (its prompt mark drawn, its line editor not
/// reading yet), where it is acted on only when bash starts to read, and
/// took the first byte of the next command with it (`bash: rintf: command
/// not found`; schedule explorer, seed 10988931725195551003).
#[test]
fn a_second_interrupt_between_commands_leaves_the_next_command_whole() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    for round in 0..8 {
        let long = SendParams { pane: pane.clone(), text: "sleep 5".into(), enter: true, ..Default::default() };
        conn.ok(Request::Send(long));
        let first = conn.send(Request::Interrupt { pane: pane.clone(), terminate: false });
        let second = conn.send(Request::Interrupt { pane: pane.clone(), terminate: false });
        let text = format!("printf 'whole-%s\\n' {round}");
        let asked = conn.send(Request::Ask { pane: pane.clone(), text, timeout_ms: Some(20_000) });
        let mut report = None;
        for _ in 0..3 {
            let (id, answer) = conn.next_answer();
            assert!([first, second, asked].contains(&id), "{id}");
            let answer = answer.unwrap_or_else(|err| panic!("round {round}: {err:?}"));
            if id == asked {
                report = Some(answer);
            }
        }
        let Some(Response::Answered(report)) = report else { panic!("round {round}: {report:?}") };
        assert_eq!(report.exit_code, Some(0), "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("whole-{round}")), "round {round}: {report:?}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A command, an interrupt and the next command, sent together, many
/// times: the interrupt finds bash just back at its prompt, where its line
/// editor turns bracketed paste on a moment before it takes signals
/// itself. A Ctrl-C in that moment went to bash, which acted on it only
/// after reading the next line, and cut its first byte (no `^C` echoed,
/// then `bash: rintf: command not found`; schedule explorer, seeds
/// 5874923024644500350 and 15060765274300354626).
#[test]
fn an_interrupt_just_after_a_command_leaves_the_next_command_whole() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    for round in 0..15 {
        let ask_for = |text: String| Request::Ask { pane: pane.clone(), text, timeout_ms: Some(20_000) };
        let first = conn.send(ask_for(format!("printf 'first-%s\\n' {round}")));
        let interrupted = conn.send(Request::Interrupt { pane: pane.clone(), terminate: false });
        let second = conn.send(ask_for(format!("printf 'whole-%s\\n' {round}")));
        let mut reports = std::collections::HashMap::new();
        for _ in 0..3 {
            let (id, answer) = conn.next_answer();
            assert!([first, interrupted, second].contains(&id), "{id}");
            reports.insert(id, answer.unwrap_or_else(|err| panic!("round {round}: {err:?}")));
        }
        // The interrupt may find the first command still running (a
        // loaded machine): it stops it, which is right too.
        let Some(Response::Answered(report)) = reports.get(&first) else { panic!("round {round}: {reports:?}") };
        let stopped = report.exit_code == Some(130) && !report.added_text.contains("command not found");
        let ran = report.exit_code == Some(0) && report.added_text.contains(&format!("first-{round}"));
        assert!(stopped || ran, "round {round}: {report:?}");
        let Some(Response::Answered(report)) = reports.get(&second) else { panic!("round {round}: {reports:?}") };
        assert_eq!(report.exit_code, Some(0), "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("whole-{round}")), "round {round}: {report:?}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// The Ctrl-C ends the command, but the prompt that says so is slow to
/// come (here a prompt command that sleeps 3 s, longer than the host's
/// wait for it; under load, a busy machine): the interrupt is the keys'
/// doing, and no SIGINT is sent to whatever runs in the foreground next.
#[test]
fn an_interrupt_whose_prompt_is_slow_to_come_is_the_keys_doing() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let started = conn.start(start_params("shell", &[]));
    let (pane, shell) = (started.id, started.pid);
    ask(&mut conn, &pane, r#"PROMPT_COMMAND="sleep 3;$PROMPT_COMMAND""#);
    let send = SendParams { pane: pane.clone(), text: "sleep 100".into(), enter: true, ..Default::default() };
    conn.ok(Request::Send(send));
    // The command is the terminal's foreground job (the prompt's mark that
    // says it began comes a moment before bash starts it).
    wait_for("`sleep 100` in the terminal's foreground", || {
        foreground_child(shell, "sleep\x00100\x00").map(drop).ok_or("not yet".to_owned())
    });
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false }) else {
        panic!()
    };
    let actions: Vec<&str> = report.steps.iter().map(|step| step.action.as_str()).collect();
    assert_eq!((report.outcome.as_str(), actions), ("turn_cancelled", vec!["keys", "observed"]), "{report:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A child of `parent` whose command line is `cmdline` and whose process
/// group is its terminal's foreground group, if there is one.
fn foreground_child(parent: u32, cmdline: &str) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let Ok(command) = std::fs::read(format!("/proc/{pid}/cmdline")) else { continue };
        if command != cmdline.as_bytes() {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // After the command's name in parentheses: state, ppid, pgrp,
        // session, tty_nr, tpgid.
        let fields: Vec<&str> = stat.rsplit_once(") ").map(|(_, rest)| rest.split(' ').collect()).unwrap_or_default();
        if fields.len() > 5 && fields[1] == parent.to_string() && fields[2] == fields[5] {
            return Some(pid);
        }
    }
    None
}

/// An interrupt whose command ended on its own sends its keys again, once
/// the prompt reads, and answers once that prompt is drawn. In the race
/// this is for, the command ended a moment before the keys came, and bash
/// held that Ctrl-C until the next line was read, whose first byte it
/// took (`bash: rintf: command not found`; the schedule explorer, seed
/// 1960887051468556976). Here the command catches the Ctrl-C and exits 3,
/// which is the same to the host: the turn ended with a status that is
/// not a Ctrl-C's.
#[test]
fn an_interrupt_whose_command_ended_on_its_own_interrupts_the_prompt_again() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    // Armed once the trap is set (its echo is `ar""med.`, the output `armed.`).
    conn.type_line(&pane, "sh -c 'trap \"exit 3\" INT; echo ar\"\"med.; sleep 100'");
    conn.follow_until(subscription, &mut seen, |seen| seen.text().contains("armed."));
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false }) else {
        panic!()
    };
    let steps: Vec<(&str, &str)> =
        report.steps.iter().map(|step| (step.action.as_str(), step.detail.as_str())).collect();
    assert_eq!(
        (report.outcome.as_str(), steps),
        (
            "turn_cancelled",
            vec![
                ("keys", "\\x03"),
                ("observed", "turn_completed (shell_integration)"),
                ("keys", "\\x03 again, at the prompt: the command had ended on its own"),
                ("observed", "the prompt was drawn again"),
            ]
        ),
        "{report:?}"
    );
    // The command's turn ended with its own status, and the second Ctrl-C,
    // at an idle prompt, opened none.
    conn.follow_until(subscription, &mut seen, |seen| {
        seen.events.iter().any(|event| matches!(event, Event::TurnCompleted { .. }))
    });
    let ends: Vec<Option<u32>> = seen
        .events
        .iter()
        .filter_map(|event| match event {
            Event::TurnCompleted { exit_code, .. } => Some(*exit_code),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [Some(3)], "{:?}", seen.events);
    let report = ask(&mut conn, &pane, "printf 'whole\\n'");
    assert_eq!(report.exit_code, Some(0), "{report:?}");
    assert!(report.added_text.contains("whole"), "{report:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// bash alone, in a terminal of the test's own (no host): the race the
/// interrupt's second keys are for, and that they end it. A Ctrl-C that
/// comes within a millisecond of a command's end mark is, now and then,
/// held by bash and acted on once the next line is read, which loses its
/// first byte (20 times in 200 on a 2-core machine: the count is printed,
/// not asserted, as it depends on the machine). The same Ctrl-C followed,
/// once bash waits for input, by a second one at the prompt and that
/// prompt's return lost none in 200.
#[test]
fn a_ctrl_c_bash_holds_as_its_command_ends_is_let_go_by_a_second_one_at_the_prompt() {
    let mut bash = MarkedBash::start();
    let rounds = 100;
    let mut lost_without = 0;
    for round in 0..rounds {
        lost_without += usize::from(!bash.ctrl_c_as_a_command_ends_then_next_command_whole(round, false));
    }
    eprintln!("a Ctrl-C as the command ended, then the next command: {lost_without} of {rounds} lost a byte");
    for round in 0..rounds {
        assert!(bash.ctrl_c_as_a_command_ends_then_next_command_whole(round, true), "round {round}");
    }
}

/// An interactive bash with the host's prompt marks, in a pseudo-terminal
/// the test holds.
struct MarkedBash {
    _home: tempfile::TempDir,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn std::io::Write + Send>,
    output: std::sync::Arc<(std::sync::Mutex<Vec<u8>>, std::sync::Condvar)>,
    /// How far `output` has been looked at.
    seen: usize,
}

impl MarkedBash {
    fn start() -> MarkedBash {
        use portable_pty::{native_pty_system, CommandBuilder, PtySize};
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(".bashrc"), "PS1='ready> '\n").unwrap();
        let environment =
            panehost_adapters::HostEnvironment { hook_dir: Some(home.path().to_path_buf()), ..Default::default() };
        let marks =
            panehost_adapters::shell_integration::bash_prompt_marks(std::path::Path::new("/bin/bash"), &environment)
                .unwrap();
        for file in &marks.files {
            std::fs::write(&file.path, &file.contents).unwrap();
        }
        let pair = native_pty_system().openpty(PtySize { rows: 24, cols: 200, ..PtySize::default() }).unwrap();
        let mut command = CommandBuilder::new("/bin/bash");
        command.args(&marks.args);
        command.arg("-i");
        command.env_clear();
        command.env("HOME", home.path());
        command.env("PATH", "/usr/bin:/bin");
        command.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(command).unwrap();
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let output = std::sync::Arc::new((std::sync::Mutex::new(Vec::new()), std::sync::Condvar::new()));
        let sink = std::sync::Arc::clone(&output);
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut chunk = [0u8; 65536];
            while let Ok(read) = reader.read(&mut chunk) {
                if read == 0 {
                    break;
                }
                sink.0.lock().unwrap().extend_from_slice(&chunk[..read]);
                sink.1.notify_all();
            }
        });
        let mut bash = MarkedBash { _home: home, child, writer, output, seen: 0 };
        bash.until(b"\x1b]133;B\x07");
        bash
    }

    fn write(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Waits for `needle` in the output after what was seen; returns what
    /// came up to its end, and marks it seen.
    fn until(&mut self, needle: &[u8]) -> Vec<u8> {
        let deadline = std::time::Instant::now() + WAIT;
        let (lock, ready) = &*self.output;
        let mut output = lock.lock().unwrap();
        loop {
            if let Some(at) = output[self.seen..].windows(needle.len()).position(|window| window == needle) {
                let end = self.seen + at + needle.len();
                let taken = output[self.seen..end].to_vec();
                self.seen = end;
                return taken;
            }
            let now = std::time::Instant::now();
            assert!(now < deadline, "no {needle:?} in {:?}", String::from_utf8_lossy(&output[self.seen..]));
            output = ready.wait_timeout(output, deadline - now).unwrap().0;
        }
    }

    /// Waits until bash sleeps in its wait for input (as the host asks the
    /// kernel) and its output has been quiet for a moment; marks it seen.
    fn settled(&mut self) {
        let pid = self.child.process_id().unwrap();
        wait_for("bash to wait for input", || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).map_err(|err| err.to_string())?;
            let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).map_err(|err| err.to_string())?;
            let sleeping = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with("S "));
            let waits = ["poll_schedule_timeout", "do_select", "core_sys_select", "do_sys_poll", "wait_woken"];
            (sleeping && waits.iter().any(|wait| wchan.starts_with(wait))).then_some(()).ok_or(wchan)
        });
        let mut length = usize::MAX;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(30));
            let now = self.output.0.lock().unwrap().len();
            if now == length {
                break;
            }
            length = now;
        }
        self.seen = length;
    }

    /// A command that ends at once; a Ctrl-C sent just after its end mark
    /// (0 to 250 µs); with `second`, once bash waits for input, a second
    /// Ctrl-C and its prompt; then the next command. True when the next
    /// command ran whole.
    fn ctrl_c_as_a_command_ends_then_next_command_whole(&mut self, round: u32, second: bool) -> bool {
        self.write(format!("printf 'first-%s\\n' {round}; (exit 3)\r").as_bytes());
        self.until(b"\x1b]133;D;3\x07");
        let began = std::time::Instant::now();
        while began.elapsed() < std::time::Duration::from_micros(u64::from(round % 11) * 25) {
            std::hint::spin_loop();
        }
        self.write(b"\x03");
        self.settled();
        if second {
            self.write(b"\x03");
            self.until(b"\x1b]133;D;");
            self.until(b"\x1b]133;B\x07");
            self.settled();
        }
        self.write(format!("printf 'whole-%s\\n' {round}\r").as_bytes());
        let ran = self.until(b"\x1b]133;D;");
        self.until(b"\x1b]133;B\x07");
        let ran = String::from_utf8_lossy(&ran);
        ran.contains(&format!("whole-{round}\r\n")) && !ran.contains("command not found")
    }
}

impl Drop for MarkedBash {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
