//! Trust boundaries (docs/SECURITY.md), each attack a test: a pane cannot
//! report another pane's turns, text cannot break out of a bracketed
//! paste, and clients refuse a host that is not their user's.

mod support;

use panehost_ipc::{Encoding, Event, Request, Response};
use support::*;

fn activity(conn: &mut Connection, pane: &panehost_ipc::PaneId) -> String {
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    detail.pane.activity
}

#[test]
fn a_pane_cannot_report_the_turns_of_another_pane_even_with_its_token() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // The victim: a fixture agent in a long turn.
    let victim = conn.start(start_params("fixture", &[]));
    let (sub, mut seen) = conn.follow_from_start_until(&victim.id, "fixture> ");
    conn.type_raw(&victim.id, "/delay 60000\r");
    conn.follow_until_text(sub, &mut seen, "delay: 60000");
    conn.type_line(&victim.id, "long task");
    conn.follow_until_text(sub, &mut seen, "working: long task");
    assert_eq!(activity(&mut conn, &victim.id), "busy");

    // The attacker: another pane that reads the victim's token from its
    // environment and reports the end of its turn as the victim.
    let forge = format!(
        "token=$(tr '\\0' '\\n' < /proc/{pid}/environ | sed -n 's/^PANEHOST_NOTIFY_TOKEN=//p'); \
         [ -n \"$token\" ] && echo token-read; \
         PANEHOST_PANE={pane} PANEHOST_NOTIFY_TOKEN=$token panehost notify --event turn_completed '{{}}'; \
         echo forged-done",
        pid = victim.pid,
        pane = victim.id
    );
    let attacker = conn.start(start_params("shell", &["sh", "-c", &forge])).id;
    let (_, attack) = conn.follow_from_start_until(&attacker, "forged-done");
    assert!(attack.text().contains("token-read"), "the test reads the token: {}", attack.text());
    assert!(attack.text().contains("NOTIFY_REFUSED"), "{}", attack.text());
    assert!(attack.text().contains(&format!("is not one of pane {}'s processes", victim.id)), "{}", attack.text());
    assert_eq!(activity(&mut conn, &victim.id), "busy", "the forged end of turn was not recorded");
    assert!(!seen.events.iter().any(|event| matches!(event, Event::TurnCompleted { .. })));
    for pane in [victim.id, attacker] {
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn submitted_text_cannot_break_out_of_the_bracketed_paste() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["bash", "--norc", "--noprofile", "-i"])).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    // bash's readline turns bracketed paste on with its prompt.
    conn.follow_until_text(subscription, &mut seen, "\x1b[?2004h");
    // Ends the paste early, erases the line (Ctrl-U) and types another
    // command: unless the markers are removed, `echo BBB` is what runs.
    let text = "echo AAA\x1b[201~\x15echo BBB";
    conn.ok(Request::Send(panehost_ipc::SendParams {
        pane: pane.clone(),
        text: text.into(),
        enter: true,
        ..Default::default()
    }));
    // The whole text was one line of text: echo prints it, Ctrl-U and all.
    conn.follow_until_text(subscription, &mut seen, "\rAAA\u{15}echo BBB\r\n");
    assert!(!seen.text().contains("\rBBB\r\n"), "the paste was broken out of: {:?}", seen.text());
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A plain bash (no startup files) in `<home>/work`, followed from its
/// start until its line editor has turned bracketed paste on: the
/// directory, the pane, its subscription and what it has printed.
fn bash_in_work_dir(
    host: &TestHost,
    conn: &mut Connection,
) -> (std::path::PathBuf, panehost_ipc::PaneId, u64, Transcript) {
    let dir = host.home.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let params = panehost_ipc::StartParams {
        cwd: Some(dir.display().to_string()),
        ..start_params("shell", &["bash", "--norc", "--noprofile", "-i"])
    };
    let pane = conn.start(params).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    conn.follow_until_text(subscription, &mut seen, "\x1b[?2004h");
    (dir, pane, subscription, seen)
}

/// A Ctrl-C inside a submission's text (from a web form, a model's
/// answer): the terminal would act on it before bash reads the paste,
/// sending SIGINT and throwing the paste away, and what followed it ran as
/// typed keys (`touch INJECTED` ran). The submission is refused, nothing
/// is typed, and the pane goes on.
#[test]
fn a_ctrl_c_inside_submitted_text_runs_nothing() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let (dir, pane, subscription, mut seen) = bash_in_work_dir(&host, &mut conn);
    for control in ["\x03", "\x1a", "\x1c"] {
        let text = format!("echo \"summarise: {control}  touch INJECTED\r\"");
        let send =
            panehost_ipc::SendParams { pane: pane.clone(), text: text.clone(), enter: true, ..Default::default() };
        let refused = conn.call(Request::Send(send)).unwrap_err();
        assert_eq!(refused.code, "INVALID_ARGUMENT", "{refused:?}");
        let asked = conn.call(Request::Ask { pane: pane.clone(), text, timeout_ms: Some(5_000) }).unwrap_err();
        assert_eq!(asked.code, "INVALID_ARGUMENT", "{asked:?}");
    }
    // The pane took nothing and goes on: the next command is the first.
    conn.type_line(&pane, "echo after-$((40+2)); ls");
    conn.follow_until_text(subscription, &mut seen, "after-42");
    assert!(!dir.join("INJECTED").exists(), "a command in the text ran");
    assert!(!seen.text().contains("summarise"), "something of the refused text was typed: {:?}", seen.text());
    conn.ok(Request::Close { pane });
    host.stop();
}

/// Keys inside a paste are text for bash: an Up-arrow, a carriage return,
/// Ctrl-D and an escape in a submission to bash's prompt are typed as part
/// of one command line, never acted on (no history recalled, no second
/// command run, no end of input).
#[test]
fn keys_inside_text_pasted_to_bash_stay_text() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let (dir, pane, subscription, mut seen) = bash_in_work_dir(&host, &mut conn);
    conn.type_line(&pane, "echo earlier-$((6*7))");
    conn.follow_until_text(subscription, &mut seen, "earlier-42");
    let text = "printf 'kept:%s:\\n' \"up \x1b[A cr \r touch INJECTED eof \x04 esc \x1bOB\"";
    conn.ok(Request::Send(panehost_ipc::SendParams {
        pane: pane.clone(),
        text: text.into(),
        enter: true,
        ..Default::default()
    }));
    conn.follow_until_text(subscription, &mut seen, "kept:up ");
    conn.type_line(&pane, "echo after-$((40+2)); ls");
    conn.follow_until_text(subscription, &mut seen, "after-42");
    assert!(!dir.join("INJECTED").exists(), "a command in the text ran");
    assert_eq!(seen.text().matches("earlier-42").count(), 1, "the Up-arrow recalled history: {:?}", seen.text());
    assert!(seen.text().contains("kept:up \x1b[A cr \r\n touch INJECTED eof \x04 esc \x1bOB:"), "{:?}", seen.text());
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A full-screen agent CLI's input box in miniature: it turns bracketed
/// paste on, reads raw keys, and says what each Enter submitted; outside a
/// paste an Up-arrow recalls its last prompt, as the CLIs' boxes do.
const PROMPT_BOX: &str = r#"#!/usr/bin/env python3
import os, sys, termios, tty
tty.setraw(0, termios.TCSANOW)
os.write(1, b"\x1b[?2004hbox> ")
line, last, pasting, pending = b"", b"", False, b""
while True:
    key = os.read(0, 1)
    if not key:
        break
    pending += key
    if pending == b"\x1b[200~":
        pasting, pending = True, b""
    elif pending == b"\x1b[201~":
        pasting, pending = False, b""
    elif pending == b"\x1b[A" and not pasting:
        line, pending = last, b""
        os.write(1, b"[history]")
    elif b"\x1b[200~".startswith(pending) or b"\x1b[201~".startswith(pending) or (b"\x1b[A".startswith(pending) and not pasting):
        continue
    else:
        if pending == b"\r" and not pasting:
            os.write(1, b"\r\nsubmitted [" + line.replace(b"\r", b"<CR>").replace(b"\x1b", b"<ESC>").replace(b"\x04", b"<EOT>") + b"]\r\nbox> ")
            last, line = line, b""
        else:
            line += pending
        pending = b""
"#;

const PROMPT_BOX_CONFIG: &str = r#"
[runtime.promptbox]
display_name = "Prompt box"
executable = ["promptbox"]
login = "not_required"
limitations = ["COMPLETION_UNOBSERVED", "NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]
"#;

/// What an agent CLI's prompt gets of keys inside a submission: with
/// bracketed paste on, text (one submission, the carriage return and the
/// escapes inside it); a program that reads lines without it (the
/// fixture agent) is refused the text, and takes nothing.
#[test]
fn keys_inside_text_for_an_agent_prompt_stay_text_or_are_refused() {
    let fake = FakeBin::new();
    fake.program("promptbox", PROMPT_BOX);
    std::fs::write(fake.dir.path().join("config.toml"), PROMPT_BOX_CONFIG).unwrap();
    let config = fake.dir.path().join("config.toml");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env()), ("PANEHOST_CONFIG", config.to_str().unwrap())]);
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(panehost_ipc::StartParams { runtime: "promptbox".into(), ..Default::default() }).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "box> ");
    let send = |text: &str| {
        Request::Send(panehost_ipc::SendParams {
            pane: pane.clone(),
            text: text.into(),
            enter: true,
            ..Default::default()
        })
    };
    conn.ok(send("first"));
    conn.follow_until_text(subscription, &mut seen, "submitted [first]");
    conn.ok(send("a\rb \x1b[A c \x04 d"));
    conn.follow_until_text(subscription, &mut seen, "submitted [a<CR>b ");
    let text = seen.text();
    assert!(text.contains("submitted [a<CR>b <ESC>[A c <EOT> d]"), "{text:?}");
    assert!(!text.contains("[history]"), "the Up-arrow was a key: {text:?}");
    assert_eq!(text.matches("submitted [").count(), 2, "the carriage return submitted: {text:?}");
    conn.ok(Request::Close { pane });

    // The fixture agent reads lines as the terminal hands them on.
    let fixture = conn.start(start_params("fixture", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&fixture, "fixture> ");
    for text in ["one\rtwo", "up \x1b[A", "end \x04", "two\nlines"] {
        let refused = conn
            .call(Request::Send(panehost_ipc::SendParams {
                pane: fixture.clone(),
                text: text.into(),
                enter: true,
                ..Default::default()
            }))
            .unwrap_err();
        assert_eq!(refused.code, "INVALID_ARGUMENT", "{text:?}: {refused:?}");
        assert!(refused.message.contains("bracketed paste"), "{refused:?}");
    }
    conn.type_line(&fixture, "after");
    conn.follow_until_text(subscription, &mut seen, "after");
    assert!(!seen.text().contains("one"), "something of the refused text was typed: {:?}", seen.text());
    conn.ok(Request::Close { pane: fixture });
    host.stop();
}

/// A host started as `nobody` in `run_dir` (a world-writable directory
/// with the sticky bit, as the temp dir is) on the path `socket`: another
/// local user squatting a path. Ended on drop.
struct Squatter {
    child: std::process::Child,
}

impl Squatter {
    fn start(run_dir: &std::path::Path, socket: &std::path::Path) -> Squatter {
        let state = run_dir.join("squatter-state");
        let child = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(panehost_bin())
            .arg("--socket")
            .arg(socket)
            .arg("--state-dir")
            .arg(&state)
            .arg("host")
            .env_clear()
            .env("HOME", run_dir)
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("setpriv runs the squatter");
        let deadline = std::time::Instant::now() + WAIT;
        while !socket.exists() {
            assert!(std::time::Instant::now() < deadline, "the squatter never listened");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Squatter { child }
    }
}

impl Drop for Squatter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `panehost ARGS` as this user with `TMPDIR` set and no other way
/// to find a socket: the default path is `$TMPDIR/panehost-<uid>/host.sock`.
fn client_command(tmpdir: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(panehost_bin())
        .args(args)
        .env_clear()
        .env("TMPDIR", tmpdir)
        .env("HOME", tmpdir)
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir().display()))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn clients_refuse_a_host_of_another_user_on_their_default_path() {
    if rustix::process::geteuid().as_raw() != 0 {
        eprintln!("SKIPPED: this test plays two users and needs to run as root (as CI does)");
        return;
    }
    let run = tempfile::tempdir().unwrap();
    std::fs::set_permissions(run.path(), std::os::unix::fs::PermissionsExt::from_mode(0o1777)).unwrap();
    // Another user takes this user's default path first.
    let default_socket = run.path().join("panehost-0").join("host.sock");
    let squatter = Squatter::start(run.path(), &default_socket);

    // The command refuses before it sends anything, and says why.
    for args in [&["ls"][..], &["send", "p1", "my secret prompt", "--enter"]] {
        let output = client_command(run.path(), args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} talked to the squatter: {stderr}");
        assert!(stderr.contains("refusing to talk to the host at"), "{stderr}");
        assert!(stderr.contains("is owned by uid 65534, not by this user (uid 0)"), "{stderr}");
    }
    // So does the control bridge.
    let mut control = std::process::Command::new(panehost_bin())
        .arg("control")
        .env_clear()
        .env("TMPDIR", run.path())
        .env("HOME", run.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    let _ = control.stdin.take().unwrap().write_all(b"{\"id\":1,\"request\":{\"list\":{}}}\n");
    let output = control.wait_with_output().unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(said.contains("refusing to talk to the host at"), "{said}");

    // The squatter's socket moved into a directory that is this user's and
    // private: the directory checks out, the process behind the socket
    // does not.
    let private = run.path().join("mine");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let moved = private.join("host.sock");
    std::fs::rename(&default_socket, &moved).unwrap();
    let output = client_command(run.path(), &["--socket", moved.to_str().unwrap(), "ls"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("the process listening on it runs as uid 65534, not as this user (uid 0)"), "{stderr}");
    drop(squatter);
}
