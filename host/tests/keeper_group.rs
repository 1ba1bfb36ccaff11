//! A keeper holding several panes: panes asked for on its stdin, each
//! served on its own; bad requests answered and survived; the keeper's
//! life bounded by its stdin and its last pane.

mod keeper_support;

use keeper_support::*;
use rustix::process::Signal;
use std::ffi::OsStr;
use std::process::Stdio;

/// A shell that says `NAME up`, then echoes each line back as `NAME:LINE`.
fn echoing(name: &str) -> Vec<String> {
    let script = format!("echo {name} up; while read line; do echo {name}:$line; done");
    vec!["/bin/sh".into(), "-c".into(), script]
}

fn argv(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

#[test]
fn holds_several_panes_each_on_its_own() {
    let mut keeper = KeeperProcess::start();
    let names = ["one", "two", "three"];
    let mut panes = Vec::new();
    for name in names {
        let child = keeper.add_pane(name, 80, 24, &argv(&echoing(name)));
        let (connection, master) = connect_expecting(&keeper.socket(name), &format!("pane {child} running"));
        read_until(&master, &format!("{name} up"));
        panes.push((child, connection, master));
    }
    let children: Vec<i32> = panes.iter().map(|(child, ..)| *child).collect();
    for &child in &children {
        assert_eq!(group_and_session(child), (child, child), "each child leads its own session and group");
    }

    // Input to one pane reaches that pane's program only.
    for (index, (_, _, master)) in panes.iter().enumerate() {
        write_all(master, format!("line{index}\n").as_bytes());
    }
    for (index, (_, _, master)) in panes.iter().enumerate() {
        read_until(master, &format!("{}:line{index}", names[index]));
    }

    // One pane's exit is reported on its own connection only, and its
    // release leaves the others serving.
    let (two, mut two_connection, _two_master) = panes.remove(1);
    keeper.end_pane(two, Signal::KILL, &mut two_connection, "137 SIGKILL");
    two_connection.expect_closed();
    assert!(!keeper.socket("two").exists(), "release removes the pane's socket file");
    let (_, _, one_master) = &panes[0];
    write_all(one_master, b"still\n");
    read_until(one_master, "one:still");

    // Released, the pane is gone: a new connection to its socket fails.
    assert!(std::os::unix::net::UnixStream::connect(keeper.socket("two")).is_err());
    let (_, three_connection, _) = panes.remove(1);
    drop(three_connection);
    let (_again, _master) = connect_expecting(&keeper.socket("three"), &format!("pane {} running", children[2]));
    assert!(keeper.is_running());
}

#[test]
fn a_pane_gets_the_requested_environment_and_nothing_of_the_keepers() {
    let mut keeper = KeeperProcess::start();
    let child =
        keeper.add_pane("env", 80, 24, &["/bin/sh", "-c", "echo [$PANE_ONLY/${KEEPER_ONLY-unset}]; exec sleep 1000"]);
    let (_connection, master) = connect_expecting(&keeper.socket("env"), &format!("pane {child} running"));
    read_until(&master, "[1/unset]");
}

#[test]
fn after_stdin_ends_the_keeper_takes_no_more_panes_and_exits_after_the_last_release() {
    let mut keeper = KeeperProcess::start();
    let first = keeper.add_pane("first", 80, 24, &["sleep", "1000"]);
    let second = keeper.add_pane("second", 80, 24, &["sleep", "1000"]);
    let (mut first_connection, _first_master) =
        connect_expecting(&keeper.socket("first"), &format!("pane {first} running"));
    let (second_connection, _second_master) =
        connect_expecting(&keeper.socket("second"), &format!("pane {second} running"));
    keeper.close_requests();

    keeper.end_pane(first, Signal::TERM, &mut first_connection, "143 SIGTERM");
    first_connection.expect_closed();
    // One pane left: the keeper still serves it, to the host that holds
    // it and, once that one has gone, to the next.
    assert!(keeper.is_running());
    drop(second_connection);
    let (mut again, _master) = connect_expecting(&keeper.socket("second"), &format!("pane {second} running"));
    assert!(keeper.is_running());

    keeper.end_pane(second, Signal::TERM, &mut again, "143 SIGTERM");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn with_stdin_open_a_keeper_without_panes_waits_for_the_next() {
    let mut keeper = KeeperProcess::start();
    let quick = keeper.add_pane("quick", 80, 24, &["true"]);
    let (mut connection, _master) = connect_expecting_exit(&keeper.socket("quick"), quick, "0 -");
    keeper.child_exited(quick);
    connection.send("release\n");
    connection.expect_closed();

    // No pane left, but the host may still ask for one.
    let next = keeper.add_pane("next", 80, 24, &["sleep", "1000"]);
    let (_connection, _master) = connect_expecting(&keeper.socket("next"), &format!("pane {next} running"));
}

#[test]
fn a_keeper_that_never_got_a_pane_exits_when_stdin_ends() {
    let mut keeper = KeeperProcess::start();
    keeper.close_requests();
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn answers_bad_pane_requests_with_one_line_and_goes_on() {
    let mut keeper = KeeperProcess::start();
    let answer = keeper.request_pane("missing", 80, 24, &["/nonexistent/program"]);
    assert!(answer.starts_with("error starting /nonexistent/program"), "{answer:?}");
    assert!(!keeper.socket("missing").exists());
    let answer = keeper.request_pane("zero", 0, 24, &["sleep", "1000"]);
    assert!(answer.starts_with("error --cols must be"), "{answer:?}");
    // A socket outside the keeper's directory.
    let words: Vec<&OsStr> =
        ["--socket", "/tmp/elsewhere.sock", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"]
            .iter()
            .map(OsStr::new)
            .collect();
    let answer = keeper.request(&words);
    assert!(answer.starts_with("error the socket /tmp/elsewhere.sock is not a file in"), "{answer:?}");
    // Words not ended by NUL.
    keeper.send_raw(&[&3_u32.to_be_bytes()[..], b"abc"].concat());
    assert_eq!(keeper.answer(), "error a pane request must end with a NUL byte");

    // The keeper still takes panes.
    let child = keeper.add_pane("good", 80, 24, &["sleep", "1000"]);
    let (_connection, _master) = connect_expecting(&keeper.socket("good"), &format!("pane {child} running"));
}

#[test]
fn a_pane_whose_socket_cannot_be_bound_is_ended() {
    let dir = TempDir::new();
    let missing = TempDir(dir.0.join("missing"));
    let mut keeper = KeeperProcess::start_in(missing, |_| {});
    let answer = keeper.request_pane("pane", 80, 24, &["sleep", "1000"]);
    assert!(answer.starts_with("error listening on"), "{answer:?}");
    keeper.close_requests();
    assert_eq!(keeper.wait_exit().code(), Some(0), "the failed pane's child was ended and reaped");
    drop(dir);
}

#[test]
fn a_request_over_the_limit_ends_the_intake() {
    let mut keeper = KeeperProcess::start();
    // A good request and an oversized length in one write: the first is
    // answered, then the second.
    let words = keeper.pane_words("first", 80, 24, &["sleep", "1000"]);
    keeper.send_raw(&[frame(&words), (2_u32 << 20).to_be_bytes().to_vec()].concat());
    let first: i32 = keeper.answer().strip_prefix("ready ").expect("ready").parse().unwrap();
    keeper.children.push(first);
    assert_eq!(keeper.answer(), "error a pane request of 2097152 bytes is over the limit of 1048576");
    // No more panes are taken; the one it holds is still served, and the
    // keeper exits once it is released.
    let (mut connection, _master) = connect_expecting(&keeper.socket("first"), &format!("pane {first} running"));
    keeper.end_pane(first, Signal::KILL, &mut connection, "137 SIGKILL");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn a_bad_command_line_is_answered_with_one_error_line() {
    let dir = TempDir::new();
    let mut keeper = KeeperProcess::start_in(dir, |command| {
        // No `--sockets`: the test's own command, without arguments.
        *command = std::process::Command::new(KEEPER);
        std::os::unix::process::CommandExt::arg0(command, KEEPER_NAME);
        command.stdin(Stdio::piped()).stdout(Stdio::piped());
    });
    assert_eq!(keeper.answer(), "error usage: panehost-keeper --sockets DIR (pane requests on stdin)");
    assert_eq!(keeper.wait_exit().code(), Some(1));
}

#[test]
fn a_pane_inherits_no_descriptor_of_the_keeper_or_of_other_panes() {
    let mut keeper = KeeperProcess::start();
    let first = keeper.add_pane("first", 80, 24, &["sleep", "1000"]);
    let (_first_connection, _first_master) =
        connect_expecting(&keeper.socket("first"), &format!("pane {first} running"));
    // By now the keeper holds the first pane's master, listener,
    // connection and pidfd, and its own stdin and stdout pipes.
    let second = keeper.add_pane("second", 80, 24, &["sleep", "1000"]);
    for child in [first, second] {
        // Until it has executed `sleep`, a child still holds what it was
        // forked with (the channel its exec reports a failure on).
        wait_for_exec(child, "sleep");
        assert_eq!(descriptors_once_exec_closed_its_own(child), ["0", "1", "2"], "the descriptors of pane {child}");
    }
}

/// The fds process `pid` holds once its exec has closed those marked
/// close-on-exec. The kernel points `/proc/PID/exe` at the new program
/// before it closes them, so for a moment after [`wait_for_exec`] the
/// child still holds the channel its exec reports a failure on. That one
/// goes within the exec; an fd the child inherited stays for its whole
/// life, so the listing is read until it is the three standard fds or
/// [`TIMEOUT`] passes, and the last listing is returned.
fn descriptors_once_exec_closed_its_own(pid: i32) -> Vec<String> {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let mut fds: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        fds.sort();
        if fds == ["0", "1", "2"] || std::time::Instant::now() >= deadline {
            return fds;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Waits until process `pid` runs the program named `name` (its
/// `/proc/PID/exe`).
fn wait_for_exec(pid: i32, name: &str) {
    let deadline = std::time::Instant::now() + TIMEOUT;
    loop {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        if exe.as_deref().and_then(std::path::Path::file_name).is_some_and(|exe| exe == name) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{pid} never executed {name} ({exe:?})");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
