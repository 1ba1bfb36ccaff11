//! `--remote`: a client of one user drives the host of a second user
//! through OpenSSH (a real sshd on loopback, a real ssh), a cut link is a
//! dropped connection that resumes byte for byte, and the remote host
//! refuses whatever does not arrive as its own user.

mod ssh_fixture;

use panehost_client::{
    Client, ClientError, ClientOptions, FollowItem, PaneFollower, ReconnectPolicy, RemoteLink, RemoteTarget,
};
use panehost_ipc::{Event, PaneId, StartParams, StreamStart};
use ssh_fixture::*;
use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A finished command's status and output.
struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn finish(mut command: std::process::Command) -> Finished {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let description = format!("{command:?}");
    let mut child = command.spawn().unwrap();
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{description} did not end within {WAIT:?}: {}", String::from_utf8_lossy(&stderr.lock().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // The pipes' readers see their end once the last writer is gone.
    let text = |buffer: &Arc<std::sync::Mutex<Vec<u8>>>| {
        wait_until("a pipe's end", || if Arc::strong_count(buffer) == 1 { Ok(()) } else { Err(String::new()) });
        String::from_utf8_lossy(&buffer.lock().unwrap()).into_owned()
    };
    Finished { code: status.code(), stdout: text(&stdout), stderr: text(&stderr) }
}

fn ok(machine: &SshMachine, args: &[&str]) -> String {
    let done = finish(machine.panehost(args));
    assert_eq!(done.code, Some(0), "panehost --remote {args:?}: {}", done.stderr);
    done.stdout
}

/// `seq FROM TO` as a terminal shows it: each line ends in CR LF.
fn seq_bytes(from: u32, to: u32) -> Vec<u8> {
    (from..=to).flat_map(|n| format!("{n}\r\n").into_bytes()).collect()
}

/// The uid a process runs as, from `/proc`.
fn uid_of(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_pane_of_another_users_host_is_followed_byte_exact_across_a_cut_link() {
    let Some(machine) = SshMachine::start("a_pane_of_another_users_host_is_followed_byte_exact_across_a_cut_link")
    else {
        return;
    };
    // No host runs there yet: the first command starts one, as the second
    // user, at that user's default socket.
    assert_eq!(machine.remote_host_pid(), None);
    let script = "stty -echo; seq 1 100000; read go; seq 100001 200000";
    let pane = ok(&machine, &["start", "shell", "--", "sh", "-c", script]).trim().to_owned();
    assert!(pane.starts_with('p'), "{pane}");
    let host_pid = machine.remote_host_pid().expect("a host listens at the second user's default socket");
    assert_eq!(uid_of(host_pid), machine.uid, "the host runs as the second user");
    let list: serde_json::Value = serde_json::from_str(&ok(&machine, &["ls", "--json"])).unwrap();
    // `{"panes": [...]}` (the protocol's answer), or a bare array.
    let panes = list.get("panes").unwrap_or(&list);
    let pane_pid =
        panes.as_array().unwrap().iter().find(|p| p["id"] == pane.as_str()).unwrap()["pid"].as_u64().unwrap();
    assert_eq!(uid_of(pane_pid as u32), machine.uid, "the pane's process runs as the second user");

    // The follower: every byte from offset 0, raw, across lost connections.
    let mut follower = machine.panehost(&["--log", "panehost_client=info", "events", &pane, "--from", "0"]);
    follower.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut follower = follower.spawn().unwrap();
    let follower_pid = follower.id();
    let out = collect(follower.stdout.take().unwrap());
    let err = collect(follower.stderr.take().unwrap());
    let guard = KillOnDrop(follower_pid);

    // Cut the link mid-stream: kill the follower's ssh, by its pid.
    wait_until("the follower to print the first 64 KiB", || {
        let len = out.lock().unwrap().len();
        if len >= 64 * 1024 {
            Ok(())
        } else {
            Err(format!("{len} bytes so far"))
        }
    });
    let ssh = children_named(follower_pid, "ssh");
    assert_eq!(ssh.len(), 1, "one ssh forward runs for the follower: {ssh:?}");
    let cut_at = out.lock().unwrap().len();
    kill_pid(ssh[0]);
    wait_until("the cut ssh to be gone", || if process_exists(ssh[0]) { Err("alive".into()) } else { Ok(()) });

    // While the follower's link is down, the pane prints the second half.
    ok(&machine, &["send", &pane, "go", "--enter"]);

    let status = wait_until("the follower to end with the pane", || match follower.try_wait() {
        Ok(Some(status)) => Ok(status),
        _ => Err(format!("{} bytes so far", out.lock().unwrap().len())),
    });
    drop(guard);
    wait_until(
        "the follower's output to end",
        || if Arc::strong_count(&out) == 1 { Ok(()) } else { Err(String::new()) },
    );
    let log = without_colours(&String::from_utf8_lossy(&err.lock().unwrap()));
    assert!(status.success(), "{status}: {log}");
    let got = out.lock().unwrap().clone();
    let mut expected = seq_bytes(1, 100000);
    expected.extend(seq_bytes(100001, 200000));
    if got != expected {
        let first = got.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(got.len().min(expected.len()));
        panic!(
            "the followed output differs from the pane's at byte {first} (got {} bytes, expected {}; the link was cut \
             after {cut_at}): got {:?}, expected {:?}\n{log}",
            got.len(),
            expected.len(),
            String::from_utf8_lossy(&got[first.saturating_sub(20)..(first + 20).min(got.len())]),
            String::from_utf8_lossy(&expected[first.saturating_sub(20)..(first + 20).min(expected.len())]),
        );
    }
    // It was a new ssh that carried the rest.
    let forwards: Vec<&str> = log.lines().filter(|line| line.contains("started an ssh forward")).collect();
    assert_eq!(forwards.len(), 2, "one forward, then one more after the cut: {log}");
    assert!(forwards[0].contains(&format!("pid={}", ssh[0])), "{log}");
    assert!(!forwards[1].contains(&format!("pid={}", ssh[0])), "{log}");
}

/// A log without its colours (`ESC [ ... m`).
fn without_colours(log: &str) -> String {
    let mut plain = String::with_capacity(log.len());
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// Kills a process by its pid when the test ends early.
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if process_exists(self.0) {
            kill_pid(self.0);
        }
    }
}

#[test]
fn the_library_reconnects_through_a_new_ssh_and_resumes_exactly() {
    let Some(machine) = SshMachine::start("the_library_reconnects_through_a_new_ssh_and_resumes_exactly") else {
        return;
    };
    let target = library_target(&machine).ssh_program("/usr/bin/ssh").unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let link = Arc::new(RemoteLink::new(target));
        let options = ClientOptions::default();
        let client = link.connect(&options).await.unwrap();
        let mut printer = Printer::start(&link, &client, &options, 5000).await;
        // Cut the link by the ssh's own pid, have the pane print while it
        // is down, and time the way back.
        let ssh = link.ssh_pid().await.expect("an ssh forward runs");
        let cut = Instant::now();
        kill_pid(ssh);
        let sender = link.connect(&options).await.unwrap();
        let reconnected = cut.elapsed();
        let new_ssh = link.ssh_pid().await.expect("a new ssh forward runs");
        assert_ne!(new_ssh, ssh, "a new ssh carries the link");
        let starts = printer.finish(&sender).await;
        assert!(!starts.is_empty(), "the follower resumed");
        assert!(
            starts.iter().all(|start| matches!(start, StreamStart::Replay { .. })),
            "every resume replays from the offset reached: {starts:?}"
        );
        eprintln!("reconnect through a new ssh (sign-in, remote `up`, handshake): {} ms", reconnected.as_millis());
        // More cuts, for the figures of docs/SCALING.md: the way back, and
        // what the link's processes cost.
        let mut times = Vec::new();
        for _ in 0..10 {
            let ssh = link.ssh_pid().await.expect("an ssh forward runs");
            let cut = Instant::now();
            kill_pid(ssh);
            let client = link.connect(&options).await.unwrap();
            client.list().await.unwrap();
            times.push(cut.elapsed().as_secs_f64() * 1000.0);
        }
        times.sort_by(f64::total_cmp);
        let ssh = link.ssh_pid().await.unwrap();
        eprintln!(
            "10 cuts: the way back (new ssh, remote `up`, handshake, a list) min {:.0} ms, median {:.0} ms, max {:.0} \
             ms; the ssh client's Pss {} KiB",
            times[0],
            times[5],
            times[9],
            pss_kib(ssh)
        );
        // Closing the link ends its ssh.
        drop((sender, client, printer));
        link.close().await;
        assert!(wait_gone(new_ssh).await, "ssh {new_ssh} outlived its link");
    });
}

/// The second user's host as the client library reaches it through the
/// machine's ssh configuration, with the local end in this test's
/// directory (the library would read XDG_RUNTIME_DIR for it).
fn library_target(machine: &SshMachine) -> RemoteTarget {
    RemoteTarget::new(MACHINE)
        .unwrap()
        .ssh_config(&machine.ssh_config)
        .unwrap()
        .remote_program(machine.remote_program.to_str().unwrap())
        .unwrap()
        .local_dir(machine.local_runtime_dir.join("panehost"))
}

/// A pane that prints `seq 1 HALF`, waits for a line, then prints
/// `seq HALF+1 2*HALF`, followed through the link from offset 0.
struct Printer {
    pane: PaneId,
    half: u32,
    follower: PaneFollower,
    seen: Vec<u8>,
}

impl Printer {
    /// Starts the pane and follows it until its first half has arrived.
    async fn start(link: &Arc<RemoteLink>, client: &Client, options: &ClientOptions, half: u32) -> Printer {
        let script = format!("stty -echo; seq 1 {half}; read go; seq {} {}", half + 1, 2 * half);
        let start = StartParams {
            runtime: "shell".into(),
            command: vec!["sh".into(), "-c".into(), script],
            ..Default::default()
        };
        let pane = client.start(start).await.unwrap().id;
        let connector = link.connector(options.clone());
        let follower =
            PaneFollower::with_connector(connector, ReconnectPolicy::default(), pane.clone(), Some(0)).await.unwrap();
        let mut printer = Printer { pane, half, follower, seen: Vec::new() };
        let first = seq_bytes(1, half).len();
        while printer.seen.len() < first {
            next_item(&mut printer.follower, &mut printer.seen).await.expect("the stream goes on");
        }
        printer
    }

    /// Lets the pane print its second half (through `sender`), follows it
    /// to its end, checks that every byte arrived once and in order, and
    /// says how the follower's streams (re)started.
    async fn finish(&mut self, sender: &Client) -> Vec<StreamStart> {
        sender.send_input(&self.pane, b"go", true).await.unwrap();
        let mut starts = Vec::new();
        loop {
            match next_item(&mut self.follower, &mut self.seen).await {
                Some(FollowItem::Start(start)) => starts.push(start),
                Some(FollowItem::Event(Event::Ended { .. })) | None => break,
                Some(_) => {}
            }
        }
        let mut expected = seq_bytes(1, self.half);
        expected.extend(seq_bytes(self.half + 1, 2 * self.half));
        assert!(self.seen == expected, "{} bytes seen, {} expected", self.seen.len(), expected.len());
        starts
    }
}

/// A process's proportional set size, from `/proc` (0 when unreadable).
fn pss_kib(pid: u32) -> u64 {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let line = rollup.lines().find(|line| line.starts_with("Pss:")).unwrap_or("Pss: 0 kB");
    line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// The follower's next item, collecting its output bytes.
async fn next_item(follower: &mut PaneFollower, seen: &mut Vec<u8>) -> Option<FollowItem> {
    let item = tokio::time::timeout(WAIT, follower.next()).await.expect("an event in time").unwrap();
    if let Some(FollowItem::Event(Event::Output { data, .. })) = &item {
        seen.extend_from_slice(data.as_slice());
    }
    item
}

async fn wait_gone(pid: u32) -> bool {
    let deadline = Instant::now() + WAIT;
    while process_exists(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

#[test]
fn the_remote_host_refuses_whoever_is_not_its_user() {
    let Some(machine) = SshMachine::start("the_remote_host_refuses_whoever_is_not_its_user") else {
        return;
    };
    let up: serde_json::Value = serde_json::from_str(ok(&machine, &["up"]).trim()).unwrap();
    let socket = machine.remote_socket();
    assert_eq!(up["socket"], socket.to_str().unwrap());
    assert_eq!(up["uid"], machine.uid);

    // Signed in as root, panehost there will not talk to another user's
    // host: its own client checks refuse the socket's directory.
    let done = finish(machine.panehost_to(MACHINE_AS_ROOT, &["--remote-socket", socket.to_str().unwrap(), "ls"]));
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    assert!(done.stderr.contains("refusing to talk to the host at"), "{}", done.stderr);
    assert!(
        done.stderr.contains(&format!("is owned by uid {}, not by this user (uid 0)", machine.uid)),
        "{}",
        done.stderr
    );

    // A forward made by hand, as root, to that socket: the host itself
    // refuses the connection, whoever made the forward.
    let local_dir = machine.local_runtime_dir.join("by-hand");
    std::fs::create_dir(&local_dir).unwrap();
    std::fs::set_permissions(&local_dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let local = local_dir.join("host.sock");
    let mut forward = machine.ssh(&["-N", "-o", "ExitOnForwardFailure=yes", "-L"]);
    forward.arg(format!("{}:{}", local.display(), socket.display())).arg(MACHINE_AS_ROOT);
    forward.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut forward = forward.spawn().unwrap();
    let _forward_guard = KillOnDrop(forward.id());
    wait_until("the forward's local end", || if local.exists() { Ok(()) } else { Err(String::new()) });
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let refused = runtime.block_on(panehost_client::Client::connect(&local, &ClientOptions::default())).unwrap_err();
    match &refused {
        ClientError::Refused { code, message, .. } => {
            assert_eq!(code, "PEER_REFUSED");
            assert_eq!(message, &format!("this host serves uid {} only", machine.uid));
        }
        other => panic!("expected PEER_REFUSED, got {other:?}"),
    }
    let _ = forward.kill();
    let _ = forward.wait();

    // And through the second user's own sign-in, the same host answers.
    let done = finish(machine.panehost(&["ls"]));
    assert_eq!(done.code, Some(0), "{}", done.stderr);
}

#[test]
fn unusable_remotes_fail_saying_what_to_do() {
    let Some(machine) = SshMachine::start("unusable_remotes_fail_saying_what_to_do") else {
        return;
    };
    // A machine whose host key is not known: no prompt, a refusal.
    let done = finish(machine.panehost_to(MACHINE_UNKNOWN_KEY, &["ls"]));
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    assert!(done.stderr.contains("ssh refused the machine's host key"), "{}", done.stderr);
    assert!(done.stderr.contains("Host key verification failed"), "{}", done.stderr);

    // No panehost there.
    let mut command = machine.panehost(&["ls"]);
    command.args(["--remote-panehost", "/nonexistent/panehost"]);
    let done = finish(command);
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    assert!(done.stderr.contains("`/nonexistent/panehost` was not found on the other machine"), "{}", done.stderr);

    // No ssh here.
    let mut command = machine.panehost(&["ls"]);
    command.env("PANEHOST_SSH", "/nonexistent/ssh");
    let done = finish(command);
    assert_eq!(done.code, Some(1), "{}", done.stderr);
    assert!(done.stderr.contains("cannot run `/nonexistent/ssh`: not found"), "{}", done.stderr);

    // A destination ssh would read as an option never reaches ssh.
    let done = finish(machine.panehost_to("-oProxyCommand=touch", &["ls"]));
    assert_eq!(done.code, Some(2), "{}", done.stderr);
    let mut command = machine.panehost(&["ls"]);
    command.args(["--remote=-oProxyCommand=sh", "--remote-panehost", "panehost; reboot"]);
    let done = finish(command);
    assert_eq!(done.code, Some(2), "{}", done.stderr);
    assert!(done.stderr.contains("starts with `-`, which ssh would read as an option"), "{}", done.stderr);

    // None of that started a host there.
    assert_eq!(machine.remote_host_pid(), None);
}

#[test]
fn ask_web_and_a_closed_client_through_the_link() {
    let Some(machine) = SshMachine::start("ask_web_and_a_closed_client_through_the_link") else {
        return;
    };
    let pane = ok(&machine, &["start", "shell", "--", "sh"]).trim().to_owned();
    let answer = ok(&machine, &["ask", &pane, "echo remote-$((6*7))"]);
    assert!(answer.contains("remote-42"), "{answer}");

    // The JSON-lines bridge, through the link.
    let mut control = machine.panehost(&["control"]);
    control.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut control = control.spawn().unwrap();
    let _control_guard = KillOnDrop(control.id());
    control.stdin.take().unwrap().write_all(b"{\"id\":7,\"request\":{\"list\":{}}}\n").unwrap();
    let output = control.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("\"id\":7") && stdout.contains(&pane), "{stdout}");

    // The web terminal serves the remote panes from a local page.
    let mut web = machine.panehost(&["web"]);
    web.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut web = web.spawn().unwrap();
    let web_pid = web.id();
    let _web_guard = KillOnDrop(web_pid);
    let out = collect(web.stdout.take().unwrap());
    let err = collect(web.stderr.take().unwrap());
    let url = wait_until("the web terminal's URL", || {
        let text = String::from_utf8_lossy(&out.lock().unwrap()).into_owned();
        text.lines()
            .next()
            .filter(|_| text.contains('\n'))
            .map(str::to_owned)
            .ok_or_else(|| format!("stderr: {}", String::from_utf8_lossy(&err.lock().unwrap())))
    });
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, fragment) = rest.split_once("/#token=").unwrap();
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    write!(
        stream,
        "GET /api/panes HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {fragment}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains(&pane), "{response}");
    let stderr = String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    assert!(stderr.contains("serving the panes of the host at machine (through ssh)"), "{stderr}");

    // A client killed outright leaves no ssh behind: its ssh's standard
    // input closes, the remote `up --hold` ends, and so does the ssh.
    let ssh = children_named(web_pid, "ssh");
    assert_eq!(ssh.len(), 1, "{ssh:?}");
    kill_pid(web_pid);
    let _ = web.wait();
    wait_until("the web terminal's ssh to end with it", || {
        if process_exists(ssh[0]) {
            Err(format!("ssh {} still runs", ssh[0]))
        } else {
            Ok(())
        }
    });
}

/// What a terminal has shown so far.
type Screen = Arc<std::sync::Mutex<Vec<u8>>>;

fn shows(screen: &Screen, needle: &str) -> bool {
    String::from_utf8_lossy(&screen.lock().unwrap()).contains(needle)
}

#[test]
fn attach_through_the_link_comes_back_after_a_cut() {
    use portable_pty::{native_pty_system, CommandBuilder, PtySize};
    let Some(machine) = SshMachine::start("attach_through_the_link_comes_back_after_a_cut") else {
        return;
    };
    let pane = ok(&machine, &["start", "shell", "--", "sh"]).trim().to_owned();

    let pair = native_pty_system().openpty(PtySize { rows: 24, cols: 80, pixel_width: 0, pixel_height: 0 }).unwrap();
    let mut command = CommandBuilder::new(support_panehost_bin());
    command.args(machine.remote_args(MACHINE));
    command.args(["attach", pane.as_str()]);
    command.env_clear();
    for (key, value) in machine.client_env() {
        command.env(key, value);
    }
    command.env("TERM", "xterm-256color");
    let mut child = pair.slave.spawn_command(command).unwrap();
    drop(pair.slave);
    let attach_pid = child.process_id().unwrap();
    let _attach_guard = KillOnDrop(attach_pid);
    let screen = collect(pair.master.try_clone_reader().unwrap());
    let mut keyboard = pair.master.take_writer().unwrap();
    let mut type_keys = |keys: &str| {
        keyboard.write_all(keys.as_bytes()).unwrap();
        keyboard.flush().unwrap();
    };
    wait_until("the pane to be drawn", || if screen.lock().unwrap().is_empty() { Err(String::new()) } else { Ok(()) });
    type_keys("echo one-$((1+1))\r");
    wait_until("the first command's output", || if shows(&screen, "one-2") { Ok(()) } else { Err(String::new()) });

    // Cut the link by the ssh's own pid; the attachment opens a new one.
    let ssh = children_named(attach_pid, "ssh");
    assert_eq!(ssh.len(), 1, "one ssh carries the attachment: {ssh:?}");
    kill_pid(ssh[0]);
    wait_until("a new ssh for the attachment", || match children_named(attach_pid, "ssh").as_slice() {
        [new] if *new != ssh[0] => Ok(()),
        other => Err(format!("{other:?}")),
    });
    // Keys typed on a connection found lost are not replayed (no one can
    // tell whether they arrived), so type until the pane answers.
    let mut answered = false;
    for _ in 0..10 {
        type_keys("echo two-$((2+2))\r");
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline && !shows(&screen, "two-4") {
            std::thread::sleep(Duration::from_millis(20));
        }
        if shows(&screen, "two-4") {
            answered = true;
            break;
        }
    }
    assert!(answered, "the pane never answered after the cut: {:?}", String::from_utf8_lossy(&screen.lock().unwrap()));

    // Detach (Ctrl-\): the command ends, and so does its ssh.
    let ssh = children_named(attach_pid, "ssh");
    type_keys("\x1c");
    let status = wait_until("attach to end", || match child.try_wait() {
        Ok(Some(status)) => Ok(status),
        _ => Err(String::new()),
    });
    assert!(status.success(), "{status:?}");
    wait_until("the detached ssh to end", || {
        if ssh.iter().any(|pid| process_exists(*pid)) {
            Err(format!("{ssh:?}"))
        } else {
            Ok(())
        }
    });
    let farewell = format!("detached from {pane}");
    wait_until("the farewell line", || if shows(&screen, &farewell) { Ok(()) } else { Err(String::new()) });
}

#[test]
fn a_remote_host_that_went_away_is_started_again_through_the_link_and_its_panes_resume() {
    let Some(machine) =
        SshMachine::start("a_remote_host_that_went_away_is_started_again_through_the_link_and_its_panes_resume")
    else {
        return;
    };
    let target = library_target(&machine);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let link = Arc::new(RemoteLink::new(target));
        let options = ClientOptions::default();
        let client = link.connect(&options).await.unwrap();
        let mut printer = Printer::start(&link, &client, &options, 3000).await;
        // The pane is quiet and its exact end is on disk there; then its
        // host goes away, leaving the pane to its keeper.
        let marker = machine.remote_state_dir().join("panehost/panes").join(format!("{}.end", printer.pane));
        wait_until("the pane's exact end on disk", || match std::fs::read(&marker) {
            Ok(bytes) if bytes.first() == Some(&b'E') => Ok(()),
            other => Err(format!("{other:?}")),
        });
        let old_host = machine.remote_host_pid().expect("a host runs there");
        let old_ssh = link.ssh_pid().await.expect("an ssh forward runs");
        drop(client);
        let stop = finish(machine.panehost(&["stop"]));
        assert_eq!(stop.code, Some(0), "{}", stop.stderr);
        assert!(wait_gone(old_host).await, "the host there did not stop");

        // The next connection finds no host behind the forward, opens a new
        // link, whose `up` starts a host there, which takes the pane back.
        let sender = link.connect(&options).await.unwrap();
        let new_host = machine.remote_host_pid().expect("a host runs there again");
        assert_ne!(new_host, old_host);
        assert_ne!(link.ssh_pid().await, Some(old_ssh), "a new link started the host");
        let starts = printer.finish(&sender).await;
        assert!(
            !starts.is_empty() && starts.iter().all(|start| matches!(start, StreamStart::Replay { .. })),
            "a quiet pane resumes by replay across a host restart: {starts:?}"
        );
        drop(sender);
        link.close().await;
    });
}
