//! The pid-reuse attack on `notify`, made deterministic: a child connects
//! to the host and exits; its parent keeps the connection and sees to it
//! that a pane's process gets the child's pid; then it reports the end of
//! that pane's turn with the pane's token. The host holds each peer by a
//! pidfd from when it connected (`host/src/server/peer_process.rs`), so the
//! pid of a process that has exited vouches for nothing: the report is
//! refused and the pane's pending `ask` stays unanswered.
//!
//! Waiting for the kernel to hand the pid round again takes some 32,000
//! forks; in a pid namespace of the test's own, `ns_last_pid` names the
//! pid the next process gets. The test runs itself again inside one
//! (`unshare --pid --fork --mount-proc`, which needs root): the host, its
//! panes and the attacker all live there. Where no namespace can be made
//! the test says so and skips, unless `PANEHOST_REQUIRE_PID_NAMESPACE` is
//! set (as CI sets it), which makes that a failure.

mod support;

use panehost_ipc::{encode, Encoding, ErrorBody, Request, RequestFrame, Response, ServerMessage};
use rustix::process::{pidfd_getfd, pidfd_open, Pid, PidfdFlags, PidfdGetfdFlags};
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::time::Instant;
use support::command::{run_to_end_within, ChildGuard};
use support::*;

/// Set (by CI) when the pid namespace must be made: failing to make it
/// then fails the test instead of skipping it.
const REQUIRE_ENV: &str = "PANEHOST_REQUIRE_PID_NAMESPACE";

/// Set for the run of this test inside its namespace.
const INSIDE_ENV: &str = "PANEHOST_INSIDE_PID_NAMESPACE";

/// Set for the attacker's child, run as this test again: the socket it
/// connects to.
const CHILD_ENV: &str = "PANEHOST_PID_REUSE_CHILD_OF";

/// How many times a pane is started before its process gets the pid: a
/// thread the host starts meanwhile takes a pid too.
const ATTEMPTS: usize = 20;

const TEST: &str = "a_forged_turn_end_from_a_reused_pid_is_refused";

#[test]
fn a_forged_turn_end_from_a_reused_pid_is_refused() {
    if let Some(socket) = std::env::var_os(CHILD_ENV) {
        connect_and_hold_until_input_ends(std::path::Path::new(&socket));
        return;
    }
    if std::env::var_os(INSIDE_ENV).is_some() {
        attack_inside_the_namespace();
        return;
    }
    if let Some(reason) = cannot_make_a_pid_namespace() {
        if std::env::var_os(REQUIRE_ENV).is_some() {
            panic!("{TEST}: a pid namespace must be made here ({REQUIRE_ENV} is set), but {reason}");
        }
        eprintln!("SKIPPED: {TEST}: {reason}");
        return;
    }
    let mut command = Command::new("unshare");
    command
        .args(["--pid", "--fork", "--kill-child", "--mount-proc", "--"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(INSIDE_ENV, "1");
    // Each wait inside may take up to WAIT.
    let outcome = run_to_end_within(command, None, WAIT * 4);
    assert!(
        outcome.status.success() && outcome.stdout.contains("1 passed"),
        "the attack inside the pid namespace failed:\n{}\n{}",
        outcome.stdout,
        outcome.stderr
    );
}

/// Why no pid namespace can be made here, if none can.
fn cannot_make_a_pid_namespace() -> Option<String> {
    let probe = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--", "sh", "-c", "echo 1 > /proc/sys/kernel/ns_last_pid"])
        .stdin(Stdio::null())
        .output();
    match probe {
        Err(error) => Some(format!("`unshare` cannot run: {error}")),
        Ok(output) if !output.status.success() => Some(format!(
            "`unshare --pid --fork --mount-proc` and a write to ns_last_pid failed ({}; it needs root): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
        Ok(_) => None,
    }
}

/// The attack, in a pid namespace where this process is the first.
fn attack_inside_the_namespace() {
    assert_eq!(std::process::id(), 1, "{INSIDE_ENV} is for the run inside the namespace");
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // A pane first, so that the keeper the next ones start in runs.
    let warm = conn.start(start_params("shell", &["sleep", "1000"])).id;

    // The child connects (the kernel names it as the connection's peer),
    // the parent takes its socket, and the child exits.
    let (mut stolen, old_pid) = connection_of_a_child_that_exited(&host);

    // The victim: a pane whose process gets the child's old pid.
    let victim = start_with_pid(&mut conn, old_pid);
    let (subscription, mut seen) = conn.follow_from_start_until(&victim.id, "fixture> ");
    conn.type_raw(&victim.id, "/delay 60000\r");
    conn.follow_until_text(subscription, &mut seen, "delay: 60000");
    let mut asker = host.connect(Encoding::Json);
    asker.send(Request::Ask { pane: victim.id.clone(), text: "long task".into(), timeout_ms: None });
    conn.follow_until_text(subscription, &mut seen, "working: long task");

    // The forged end of the turn: the victim's token, from the connection
    // whose peer's pid is now the victim's.
    let token = notify_token(victim.pid);
    let forged = RequestFrame {
        id: 1,
        request: Request::Notify {
            pane: victim.id.clone(),
            token,
            event: "turn_completed".into(),
            payload: "{}".into(),
        },
    };
    write_frame(&mut stolen, &encode(Encoding::Json, &forged).unwrap());
    let answer: ServerMessage = serde_json::from_slice(&read_frame(&mut stolen).expect("an answer")).unwrap();
    let ServerMessage::Error { id: Some(1), error } = answer else { panic!("the forged notify was taken: {answer:?}") };
    assert_eq!(error.code, "NOTIFY_REFUSED", "{error:?}");
    assert!(error.message.contains(&format!("(pid {old_pid}) has exited")), "{error:?}");

    // The ask is still waiting: closing the pane is what answers it, with
    // an error, not with a turn report.
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: victim.id.clone() }) else { panic!() };
    assert_eq!(detail.pane.activity, "busy", "the forged end of turn was recorded");
    conn.ok(Request::Close { pane: victim.id.clone() });
    let (_, answer) = asker.next_answer();
    let error: ErrorBody = answer.expect_err("the ask was answered by the forged notify");
    assert_ne!(error.code, "NOTIFY_REFUSED");
    conn.ok(Request::Close { pane: warm });
    host.stop();
}

/// The attacker's child: connects, does the handshake, and holds the
/// connection until its standard input ends; it then exits without
/// shutting the connection down (a copy of it lives on).
fn connect_and_hold_until_input_ends(socket: &std::path::Path) {
    let _connection = Connection::open(socket, Encoding::Json);
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
}

/// A connection whose peer, as the kernel named it, has exited and been
/// reaped: a child (this test, run again) connects and does the
/// handshake, this process takes a copy of its connection
/// (`pidfd_getfd`), then the child's input closes and it exits. Gives the
/// connection and the child's pid.
fn connection_of_a_child_that_exited(host: &TestHost) -> (UnixStream, u32) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env_remove(INSIDE_ENV)
        .env(CHILD_ENV, &host.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let mut child = ChildGuard(Some(command.spawn().unwrap()));
    let pid = child.child().id();
    let stolen = take_its_connection(pid, host.pid());
    // The child reads its input only once the host has welcomed it: the
    // handshake is done when it exits.
    let stream = UnixStream::from(stolen);
    stream.set_read_timeout(Some(WAIT)).unwrap();
    drop(child.child().stdin.take());
    let status = child.wait_for_exit("the attacker's child");
    assert!(status.success(), "{status}");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "the child was reaped");
    (stream, pid)
}

/// A copy of the socket process `pid` holds connected to the host (whose
/// pid is `host_pid`), once it has connected.
fn take_its_connection(pid: u32, host_pid: u32) -> OwnedFd {
    let pidfd = pidfd_open(Pid::from_raw(pid as i32).unwrap(), PidfdFlags::empty()).unwrap();
    support::command::wait_for("the control bridge's connection to the host", || {
        let sockets: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map_err(|error| error.to_string())?
            .flatten()
            .filter(|entry| {
                std::fs::read_link(entry.path()).is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
            })
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect();
        for &fd in &sockets {
            let Ok(copy) = pidfd_getfd(pidfd.as_fd(), fd, PidfdGetfdFlags::empty()) else { continue };
            let peer = rustix::net::sockopt::socket_peercred(&copy).map(|peer| peer.pid.as_raw_nonzero().get());
            if peer.ok() == Some(host_pid as i32) {
                return Ok(copy);
            }
        }
        Err(format!("none of the sockets {sockets:?} is connected to the host"))
    })
}

/// Starts fixture panes until one's process gets `pid`, closing the others.
fn start_with_pid(conn: &mut Connection, pid: u32) -> panehost_ipc::PaneSummary {
    let deadline = Instant::now() + WAIT;
    for _ in 0..ATTEMPTS {
        wait_until_free(pid, deadline);
        let mut last_pid = std::fs::OpenOptions::new().write(true).open("/proc/sys/kernel/ns_last_pid").unwrap();
        write!(last_pid, "{}", pid - 1).unwrap();
        drop(last_pid);
        let pane = conn.start(start_params("fixture", &[]));
        if pane.pid == pid {
            return pane;
        }
        conn.ok(Request::Close { pane: pane.id });
    }
    panic!("no pane's process got pid {pid} in {ATTEMPTS} starts");
}

/// Waits until no process has `pid`.
fn wait_until_free(pid: u32, deadline: Instant) {
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "pid {pid} was never free");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The notify token in the environment of process `pid`.
fn notify_token(pid: u32) -> String {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    environ
        .split(|&byte| byte == 0)
        .find_map(|entry| entry.strip_prefix(b"PANEHOST_NOTIFY_TOKEN="))
        .map(|token| String::from_utf8_lossy(token).into_owned())
        .expect("the pane's token")
}
