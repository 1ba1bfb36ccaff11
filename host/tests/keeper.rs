//! The pane keeper holding one pane, driven as the host drives it: ask for
//! the pane, connect, take the master fd, watch the exit, release. (Keepers
//! holding several panes: `keeper_group.rs`.)

mod keeper_support;

use keeper_support::*;
use rustix::fs::{FileType, Mode, OFlags};
use rustix::process::Signal;
use std::os::fd::AsFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Instant;

#[test]
fn hands_over_the_master_reports_the_exit_and_ends_on_release() {
    let mut keeper = Keeper::start(80, 24, &["/bin/sh", "-c", "echo hello; read line; echo got:$line; exit 7"]);
    let child = keeper.child_pid;
    assert_eq!(group_and_session(keeper.pid).1, keeper.pid, "the keeper leads its own session");
    assert_eq!(group_and_session(child), (child, child), "the child leads its own session and group");
    let mode = std::fs::metadata(&keeper.socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "hello");
    write_all(&master, b"abc\n");
    read_until(&master, "got:abc");
    assert_eq!(connection.read_line(), "exited 7 -");
    keeper.child_exited();
    drop(master);
    drop(connection);

    // A host that comes back later still learns the exit, and gets the fd.
    let (mut connection, _master) = keeper.connect_expecting(&format!("pane {child} exited 7 -"));
    connection.send("release\n");
    let status = keeper.wait_exit();
    assert_eq!(status.code(), Some(0));
    assert!(!keeper.socket.exists(), "release removes the socket file");
}

#[test]
fn adopts_the_orphans_of_its_panes_reaps_them_and_leaves_its_childs_exit_to_the_pane() {
    // A daemon whose parent (a subshell) exits at once: an orphan, which
    // lives until it reads a line from a FIFO and then exits.
    let dir = TempDir::new();
    let fifo = dir.0.join("orphan-go");
    Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    let script = format!("(sh -c 'echo orphan:$$:; read go < {}' &); read line; exit 5", fifo.display());
    let mut keeper = Keeper::start_in(dir, 80, 24, &["/bin/sh", "-c", &script], |_| {});
    let child = keeper.child_pid;
    let status = std::fs::read_to_string(format!("/proc/{child}/status")).unwrap();
    let blocked = status.lines().find(|line| line.starts_with("SigBlk:")).unwrap();
    assert_eq!(blocked.split_whitespace().nth(1), Some("0000000000000000"), "the child blocks no signal");
    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    let output = read_until(&master, ":\r\n");
    let orphan: i32 = output.split("orphan:").nth(1).and_then(|rest| rest.split(':').next()).unwrap().parse().unwrap();
    let deadline = Instant::now() + TIMEOUT;
    while parent_of(orphan) != Some(keeper.pid) {
        assert!(Instant::now() < deadline, "the orphan was not adopted by the keeper: {:?}", parent_of(orphan));
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // It exits; the keeper reaps it (no zombie left).
    std::fs::write(&fifo, "go\n").unwrap();
    while std::path::Path::new(&format!("/proc/{orphan}")).exists() {
        assert!(Instant::now() < deadline, "the keeper left its orphan unreaped");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The pane's own child is still reaped by its pane, with its status.
    write_all(&master, b"done\n");
    assert_eq!(connection.read_line(), "exited 5 -");
    keeper.child_exited();
    connection.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn starts_a_child_in_the_control_group_it_is_given_and_stays_in_its_own() {
    let Some(own) = cgroup_dir_of("self") else {
        eprintln!("no cgroup v2 hierarchy here: not run");
        return;
    };
    let group = own.join(format!("panehost-keeper-test-{}", std::process::id()));
    if std::fs::create_dir(&group).is_err() {
        eprintln!("no control group this test may make in {}: not run", own.display());
        return;
    }
    let mut keeper = KeeperProcess::start_in(TempDir::new(), |_| {});
    let mut words = keeper.pane_words("pane", 80, 24, &["sleep", "1000"]);
    let dash = words.iter().position(|word| word == "--").unwrap();
    words.splice(dash..dash, ["--cgroup".into(), group.clone().into_os_string()]);
    let answer = keeper.request(&words.iter().map(|word| word.as_os_str()).collect::<Vec<_>>());
    let child: i32 = answer.strip_prefix("ready ").expect("ready").parse().unwrap();
    keeper.children.push(child);
    let in_child = cgroup_dir_of(&child.to_string());
    let in_keeper = cgroup_dir_of(&keeper.pid.to_string());
    let (mut connection, _master) = connect_expecting(&keeper.socket("pane"), &format!("pane {child} running"));
    keeper.end_pane(child, Signal::KILL, &mut connection, "137 SIGKILL");
    let removed = std::fs::remove_dir(&group);
    assert_eq!(in_child.as_ref(), Some(&group), "the child starts in the group it was given");
    assert_eq!(in_keeper.as_ref(), Some(&own), "the keeper is back in its own group");
    assert!(removed.is_ok(), "the group is empty once the child is gone: {removed:?}");
}

/// The directory of the cgroup v2 group of process `pid` (or `self`).
fn cgroup_dir_of(pid: &str) -> Option<std::path::PathBuf> {
    let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = groups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split_whitespace().collect();
        (after.starts_with("cgroup2 ") && fields.get(3) == Some(&"/")).then(|| fields[4].to_owned())
    })?;
    Some(std::path::Path::new(&mount).join(path.trim_start_matches('/')))
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()
}

#[test]
fn survives_hangup_and_interrupt_ignores_early_release_and_reports_a_signal() {
    let mut keeper = Keeper::start(80, 24, &["sleep", "1000"]);
    let child = keeper.child_pid;
    rustix::process::kill_process(pid(keeper.pid), Signal::HUP).unwrap();
    rustix::process::kill_process(pid(keeper.pid), Signal::INT).unwrap();

    let (mut first, _first_master) = keeper.connect_expecting(&format!("pane {child} running"));
    // While the child runs, release changes nothing.
    first.send("release\n");
    // One host at a time: a second connection is closed unanswered, and the
    // first goes on.
    keeper.connect_refused();
    keeper.signal_child_group(Signal::TERM);
    assert_eq!(first.read_line(), "exited 143 SIGTERM");
    keeper.child_exited();
    drop(first);

    // Once the first has gone, the next is served.
    let (mut second, _second_master) = keeper.connect_expecting(&format!("pane {child} exited 143 SIGTERM"));
    second.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn reports_the_exit_exactly_once_per_connection() {
    let mut keeper = Keeper::start(80, 24, &["sleep", "1000"]);
    let child = keeper.child_pid;
    let (mut before, _before_master) = keeper.connect_expecting(&format!("pane {child} running"));
    keeper.signal_child_group(Signal::KILL);
    assert_eq!(before.read_line(), "exited 137 SIGKILL");
    keeper.child_exited();

    // A connection made after the exit, once the first has gone, has it
    // in its greeting only.
    drop(before);
    let (mut after, _after_master) = keeper.connect_expecting(&format!("pane {child} exited 137 SIGKILL"));
    // Other lines change nothing; `release` then ends the keeper, which
    // closes the connection without another `exited` line.
    after.send("hello\n");
    after.send("release\n");
    after.expect_closed();
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn ctrl_c_on_the_terminal_interrupts_the_child() {
    // The keeper ignores SIGINT; its child must not inherit that, and the PTY
    // must be its controlling terminal for ^C to reach it.
    let mut keeper = Keeper::start(80, 24, &["/bin/sh", "-c", "echo waiting; exec sleep 1000"]);
    let child = keeper.child_pid;
    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "waiting");
    write_all(&master, b"\x03");
    assert_eq!(connection.read_line(), "exited 130 SIGINT");
    keeper.child_exited();
    connection.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn output_written_while_no_host_is_connected_waits_in_the_pty() {
    let dir = TempDir::new();
    let input = dir.0.join("input.fifo");
    let written = dir.0.join("written.fifo");
    for fifo in [&input, &written] {
        rustix::fs::mknodat(rustix::fs::CWD, fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    }
    let script = r#"echo armed; read x < "$1"; echo late:$x; echo done > "$2"; exec sleep 1000"#;
    let (input_arg, written_arg) = (input.to_str().unwrap().to_owned(), written.to_str().unwrap().to_owned());
    let mut keeper = Keeper::start_in(dir, 80, 24, &["/bin/sh", "-c", script, "sh", &input_arg, &written_arg], |_| {});
    let child = keeper.child_pid;

    let (connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "armed");
    // The host goes away: only the keeper holds the master now.
    drop(master);
    drop(connection);

    // Opening a fifo read-write never blocks; it also keeps each fifo open
    // for the child's open at the other end.
    let flags = OFlags::RDWR | OFlags::CLOEXEC;
    let input_fd = rustix::fs::open(&input, flags, Mode::empty()).unwrap();
    let written_fd = rustix::fs::open(&written, flags | OFlags::NONBLOCK, Mode::empty()).unwrap();
    write_all(&input_fd, b"xyz\n");
    // The child says `done` only after writing `late:xyz` to the PTY.
    assert!(wait_readable(written_fd.as_fd(), Instant::now() + TIMEOUT), "the child did not write");

    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "late:xyz");
    keeper.end_pane(Signal::KILL, &mut connection, "137 SIGKILL");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn sets_the_window_size_when_started_as_a_process_group_leader() {
    // The host starts keepers in a process group of their own; setsid then
    // cannot succeed, and the keeper stays that group's leader.
    let mut keeper = Keeper::start_in(TempDir::new(), 100, 30, &["stty", "size"], |command| {
        command.process_group(0);
    });
    let child = keeper.child_pid;
    assert_eq!(group_and_session(keeper.pid).0, keeper.pid);

    let (mut connection, master) = connect_expecting_exit(&keeper.socket, child, "0 -");
    keeper.child_exited();
    // What the child wrote stays readable after it exited.
    let output = read_until(&master, "\n");
    assert_eq!(output.trim(), "30 100");
    connection.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn closes_a_connection_from_another_user() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: making a connection as another user needs root");
        return;
    }
    let keeper = Keeper::start(80, 24, &["sleep", "1000"]);
    // Loosen the file permissions so the other user can connect at all: the
    // peer check must hold even then.
    std::fs::set_permissions(&keeper.process.dir.0, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&keeper.socket, std::fs::Permissions::from_mode(0o666)).unwrap();

    let mut helper = Command::new(std::env::current_exe().unwrap());
    helper
        .args(["--exact", "foreign_peer_helper", "--nocapture", "--test-threads=1"])
        .env_clear()
        .env(FOREIGN_SOCKET_VAR, &keeper.socket)
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let helper = helper.spawn().expect("start the test binary as another user");
    let pidfd =
        rustix::process::pidfd_open(pid(i32::try_from(helper.id()).unwrap()), rustix::process::PidfdFlags::empty())
            .unwrap();
    // The helper's own reads time out after TIMEOUT.
    assert!(wait_readable(pidfd.as_fd(), Instant::now() + 2 * TIMEOUT), "the helper did not finish");
    let output = helper.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success() && stdout.contains(FOREIGN_REFUSED),
        "helper: {}\n{stdout}\n{stderr}",
        output.status
    );

    // The owner is still served.
    let (_connection, _master) = keeper.connect_expecting(&format!("pane {} running", keeper.child_pid));
}

/// Not a test of its own: `closes_a_connection_from_another_user` runs
/// this test binary again as another user, with the socket in the
/// environment, and this is what that process does. Without the variable it
/// does nothing.
#[test]
fn foreign_peer_helper() {
    let Some(socket) = std::env::var_os(FOREIGN_SOCKET_VAR) else {
        return;
    };
    assert_ne!(rustix::process::geteuid().as_raw(), 0);
    let stream = UnixStream::connect(socket).expect("connect as another user");
    let mut connection = Connection { stream, pending: Vec::new(), fds: Vec::new() };
    connection.expect_closed();
    println!("{FOREIGN_REFUSED}");
}
