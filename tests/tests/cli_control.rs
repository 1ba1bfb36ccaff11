//! The `panehost` command's long-running modes, end to end: `control` (the
//! JSON-lines bridge) and a client command starting a host on demand.

mod support;

use panehost_ipc::Encoding;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::command::*;
use support::*;

// ---------------------------------------------------------------------------
// 1. control: the JSON-lines bridge
// ---------------------------------------------------------------------------

/// A running `panehost control` with its standard input and output.
struct Control {
    guard: ChildGuard,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl Control {
    fn spawn(cli: &Cli) -> Control {
        let mut command = cli.command(&["control"]);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut guard = ChildGuard(Some(command.spawn().unwrap()));
        let stdin = guard.child().stdin.take();
        let stdout = guard.child().stdout.take().unwrap();
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        Control { guard, stdin, lines }
    }

    fn write_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line, parsed; None when standard output has closed.
    fn next_line(&self) -> Option<Value> {
        match self.lines.recv_timeout(WAIT) {
            Ok(line) => {
                Some(serde_json::from_str(&line).unwrap_or_else(|error| panic!("not JSON ({error}): {line:?}")))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("control printed nothing within {WAIT:?}"),
        }
    }

    /// Writes a request line and returns the line that answers it.
    fn call(&mut self, line: &str) -> Value {
        self.write_line(line);
        self.next_line().expect("an answer before the end of output")
    }
}

/// The answer's kind (`response` or `error`), its id, and its inner body.
fn answer(line: &Value) -> (&str, &Value, &Value) {
    let object = line.as_object().unwrap_or_else(|| panic!("not an object: {line}"));
    assert_eq!(object.len(), 1, "one key: {line}");
    if let Some(response) = object.get("response") {
        ("response", &response["id"], &response["body"])
    } else if let Some(error) = object.get("error") {
        ("error", &error["id"], &error["error"])
    } else {
        panic!("neither a response nor an error: {line}")
    }
}

#[test]
fn control_bridges_json_lines_and_exits_when_input_ends() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let mut control = Control::spawn(&cli);

    // No welcome line: the first line printed answers the first request.
    let line = control.call(r#"{"id":1,"request":{"list":{}}}"#);
    let (kind, id, body) = answer(&line);
    assert_eq!((kind, id), ("response", &Value::from(1)), "{line}");
    assert_eq!(body["panes"]["panes"], serde_json::json!([]), "{line}");

    let line = control.call(r#"{"id":2,"request":{"start":{"runtime":"shell"}}}"#);
    let (kind, id, body) = answer(&line);
    assert_eq!((kind, id), ("response", &Value::from(2)), "{line}");
    let started = &body["started"];
    let pane = started["id"].as_str().expect("started.id").to_owned();
    assert_eq!(started["runtime"], "shell", "{line}");
    assert_eq!(started["state"], "running", "{line}");

    let line = control.call(&format!(r#"{{"id":3,"request":{{"inspect":{{"pane":"{pane}"}}}}}}"#));
    let (kind, id, body) = answer(&line);
    assert_eq!((kind, id), ("response", &Value::from(3)), "{line}");
    assert_eq!(body["inspected"]["pane"]["id"], pane.as_str(), "{line}");
    assert!(body["inspected"]["screen"]["text"].is_string(), "{line}");

    // A host error answers its request's id.
    let line = control.call(r#"{"id":4,"request":{"inspect":{"pane":"p00000000"}}}"#);
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id), ("error", &Value::from(4)), "{line}");
    assert_eq!(error["code"], "UNKNOWN_PANE", "{line}");

    // A line that is not JSON: answered with no id.
    let line = control.call("not json");
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id), ("error", &Value::Null), "{line}");
    assert_eq!(error["code"], "MALFORMED_REQUEST", "{line}");

    // JSON with an unknown operation: the host answers its id.
    let line = control.call(r#"{"id":9,"request":{"teleport":{}}}"#);
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id), ("error", &Value::from(9)), "{line}");
    assert_eq!(error["code"], "MALFORMED_REQUEST", "{line}");

    // Blank lines are skipped; the bridge still answers what follows.
    control.write_line("");
    let line = control.call(r#"{"id":10,"request":{"list":{}}}"#);
    let (kind, id, body) = answer(&line);
    assert_eq!((kind, id), ("response", &Value::from(10)), "{line}");
    assert_eq!(body["panes"]["panes"].as_array().map(Vec::len), Some(1), "{line}");

    // Close the pane and close stdin at once: the bridge still prints the
    // answer before it exits, then exits 0 on its own.
    control.write_line(&format!(r#"{{"id":11,"request":{{"close":{{"pane":"{pane}"}}}}}}"#));
    drop(control.stdin.take());
    let line = control.next_line().expect("the close answer before the end of output");
    let (kind, id, body) = answer(&line);
    assert_eq!((kind, id), ("response", &Value::from(11)), "{line}");
    assert!(body["closed"].is_object(), "{line}");
    assert!(control.next_line().is_none(), "nothing after the last answer");
    let status = control.guard.wait_for_exit("panehost control");
    assert!(status.success(), "control exited with {status}");

    let list = cli.json(&["ls", "--json"]);
    assert!(find_pane(&list, &pane).is_none(), "{list}");
    host.stop();
}

/// The peak resident memory of process `pid` (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("a VmHWM line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

impl Control {
    fn write_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `prefix`, then `len` bytes of `fill` a MiB at a time, then
    /// `suffix`, without a line feed.
    fn write_long(&mut self, prefix: &str, fill: u8, len: usize, suffix: &str) {
        self.write_bytes(prefix.as_bytes());
        let chunk = vec![fill; 1024 * 1024];
        let mut left = len;
        while left > 0 {
            let part = left.min(chunk.len());
            self.write_bytes(&chunk[..part]);
            left -= part;
        }
        self.write_bytes(suffix.as_bytes());
    }

    /// Every line until standard output closes.
    fn lines_to_end(&self) -> Vec<Value> {
        std::iter::from_fn(|| self.next_line()).collect()
    }
}

/// Twenty million bytes.
const HUGE_LINE: usize = 20_000_000;

/// A generous bound on the bridge's peak memory while it refuses huge lines.
const BRIDGE_PEAK_KIB: u64 = 64 * 1024;

#[test]
fn control_refuses_a_line_longer_than_a_frame_without_holding_it() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let mut control = Control::spawn(&cli);
    let pid = control.guard.child().id();
    // A warm-up answer: the bridge is connected and has read a line.
    let line = control.call(r#"{"id":1,"request":{"list":{}}}"#);
    assert_eq!(answer(&line).0, "response", "{line}");
    let before = peak_rss_kib(pid);

    // Twenty million bytes inside one JSON string, no line feed until the end.
    let (prefix, suffix) = (r#"{"id":12,"request":{"send":{"pane":"p1","text":""#, r#""}}}"#);
    control.write_long(prefix, b'x', HUGE_LINE, suffix);
    let while_unfinished = peak_rss_kib(pid);
    control.write_line("");
    let line = control.next_line().expect("an answer to the huge line");
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id), ("error", &Value::from(12)), "{line}");
    assert_eq!(error["code"], "FRAME_TOO_LARGE", "{line}");
    let message = error["message"].as_str().unwrap();
    let length = prefix.len() + HUGE_LINE + suffix.len();
    assert!(message.contains(&length.to_string()), "the line's length: {message}");
    // The next line is served as usual.
    let line = control.call(r#"{"id":13,"request":{"list":{}}}"#);
    assert_eq!(answer(&line).0, "response", "{line}");
    assert_eq!(answer(&line).1, &Value::from(13), "{line}");

    // At the end of input, with no line feed at all: answered, then the exit.
    control.write_long("", b'[', HUGE_LINE, "");
    // All but what the pipe holds has been read: the peak of the whole run
    // (read from /proc while the bridge still runs).
    let peak = peak_rss_kib(pid);
    drop(control.stdin.take());
    let lines = control.lines_to_end();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let (kind, id, error) = answer(&lines[0]);
    assert_eq!((kind, id, &error["code"]), ("error", &Value::Null, &Value::from("FRAME_TOO_LARGE")), "{lines:?}");
    let status = control.guard.wait_for_exit("panehost control");
    assert!(status.success(), "control exited with {status}");
    eprintln!(
        "the bridge's peak memory: {before} KiB before, {while_unfinished} KiB with 20 MB of one line written, \
         {peak} KiB after two 20 MB lines"
    );
    assert!(peak < BRIDGE_PEAK_KIB, "the bridge peaked at {peak} KiB");
    host.stop();
}

#[test]
fn control_judges_sizes_keys_and_ids_and_answers_everything_before_it_exits() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let mut control = Control::spawn(&cli);
    let max = panehost_ipc::MAX_CLIENT_FRAME_LEN;
    // A request of exactly the largest frame (whitespace inside the JSON), with
    // a carriage return and spaces around it: forwarded, answered by the host.
    let mut largest = String::from(r#"{"id":5,"request":{"list":{}}"#);
    largest.push_str(&" ".repeat(max - largest.len() - 1));
    largest.push('}');
    assert_eq!(largest.len(), max);
    let line = control.call(&format!("  {largest} \r"));
    let (kind, id, body) = answer(&line);
    assert_eq!((kind, id), ("response", &Value::from(5)), "{line}");
    assert!(body["panes"]["panes"].is_array(), "{line}");
    // One byte more: refused here, with the id it begins with.
    let mut over = largest.clone();
    over.insert(over.len() - 1, ' ');
    over.replace_range(6..7, "6");
    let line = control.call(&over);
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id, &error["code"]), ("error", &Value::from(6), &Value::from("FRAME_TOO_LARGE")), "{line}");

    // The smallest object: no id.
    let line = control.call("{}");
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id, &error["code"]), ("error", &Value::Null, &Value::from("MALFORMED_REQUEST")), "{line}");
    assert!(error["message"].as_str().unwrap().contains("no id"), "{line}");
    // Not an object.
    let line = control.call("[1,2]");
    assert_eq!(answer(&line).1, &Value::Null, "{line}");
    // A key twice: the id itself, and one deep inside a request with a good id.
    let line = control.call(r#"{"id":1,"id":2,"request":{"list":{}}}"#);
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id, &error["code"]), ("error", &Value::Null, &Value::from("MALFORMED_REQUEST")), "{line}");
    assert!(error["message"].as_str().unwrap().contains("`id`"), "{line}");
    let line = control.call(r#"{"id":4,"request":{"start":{"runtime":"shell","env":{"A":"1","A":"2"}}}}"#);
    let (kind, id, error) = answer(&line);
    assert_eq!((kind, id, &error["code"]), ("error", &Value::from(4), &Value::from("MALFORMED_REQUEST")), "{line}");
    assert!(error["message"].as_str().unwrap().contains("`A` appears twice"), "{line}");
    // Ids that are not non-negative integers: refused, echoed when whole.
    for (request_id, echoed) in [("3.0", Value::from(3)), ("-1", Value::Null), (r#""7""#, Value::Null)] {
        let line = control.call(&format!(r#"{{"id":{request_id},"request":{{"list":{{}}}}}}"#));
        let (kind, id, error) = answer(&line);
        assert_eq!((kind, id), ("error", &echoed), "{line}");
        assert!(error["message"].as_str().unwrap().contains("non-negative integer"), "{line}");
    }
    // Nothing reached the host: the env line started no pane.
    let line = control.call(r#"{"id":20,"request":{"list":{}}}"#);
    assert_eq!(answer(&line).2["panes"]["panes"], serde_json::json!([]), "{line}");

    // At the end of input, every answer still due is printed, the slow one
    // (a wait that times out) and the ones answered here among them.
    let line = control.call(r#"{"id":21,"request":{"start":{"runtime":"shell"}}}"#);
    let pane = answer(&line).2["started"]["id"].as_str().expect("a started pane").to_owned();
    control.write_line(&format!(
        r#"{{"id":22,"request":{{"wait_for":{{"pane":"{pane}","pattern":"never-shown","timeout_ms":1500}}}}}}"#
    ));
    control.write_line(r#"{"id":1,"id":2,"request":{"list":{}}}"#);
    control.write_line(r#"{"id":3.0,"request":{"list":{}}}"#);
    control.write_line(r#"{"id":23,"request":{"list":{}}}"#);
    control.write_line(r#"{"id":23,"request":{"list":{}}}"#);
    drop(control.stdin.take());
    let ended = Instant::now();
    let lines = control.lines_to_end();
    let mut ids: Vec<String> = lines.iter().map(|line| answer(line).1.to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["22", "23", "23", "3", "null"].map(str::to_owned).to_vec(), "{lines:?}");
    let status = control.guard.wait_for_exit("panehost control");
    assert!(status.success(), "control exited with {status}");
    eprintln!("the bridge exited {:?} after the end of its input, every answer printed", ended.elapsed());
    cli.ok(&["close", &pane]);
    host.stop();
}

// ---------------------------------------------------------------------------
// 2. Autostart, and one host per socket
// ---------------------------------------------------------------------------

/// Removes ANSI escape sequences (CSI ... final byte).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The pids of every `host listening ... pid=N` line in a host log.
fn listening_pids(log: &Path) -> Vec<u32> {
    let text = strip_ansi(&std::fs::read_to_string(log).unwrap_or_default());
    text.lines()
        .filter(|line| line.contains("host listening"))
        .filter_map(|line| {
            let rest = &line[line.find("pid=")? + 4..];
            rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        })
        .collect()
}

/// A host the command started in the background: ended (by its pid, from
/// its log) if the test fails before it does so itself.
struct AutostartedHost {
    log: PathBuf,
    socket: PathBuf,
}

impl Drop for AutostartedHost {
    fn drop(&mut self) {
        for pid in listening_pids(&self.log) {
            // A pid from the log may since belong to another process (of
            // another test): only the host serving this socket is ended.
            if !process_exists(pid) || !serves_socket(pid, &self.socket) {
                continue;
            }
            let _ = Command::new("kill").arg("-TERM").arg(pid.to_string()).status();
            let deadline = Instant::now() + WAIT;
            while process_exists(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if process_exists(pid) {
                let _ = Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
            }
        }
    }
}

/// True when process `pid` is a host started for `socket`.
fn serves_socket(pid: u32, socket: &Path) -> bool {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline.split(|&b| b == 0).any(|arg| Path::new(std::ffi::OsStr::from_bytes(arg)) == socket)
}

/// Field `index` (0-based, counting from the state after the command name)
/// of /proc/PID/stat.
fn stat_field(pid: u32, index: usize) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.split_whitespace().nth(index).map(str::to_owned)
}

#[test]
fn a_client_command_starts_a_host_in_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let cli = Cli {
        socket: dir.path().join("run").join("host.sock"),
        state_dir: dir.path().join("state"),
        home: dir.path().join("home"),
    };
    std::fs::create_dir_all(&cli.home).unwrap();
    let log = cli.state_dir.join("host.log");
    let _cleanup = AutostartedHost { log: log.clone(), socket: cli.socket.clone() };
    assert!(!cli.socket.exists());

    // No host answers: ls starts one, then lists its (no) panes.
    let outcome = cli.run(&["ls"]);
    assert!(outcome.status.success(), "{outcome:?}\nhost log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    assert!(outcome.stdout.starts_with("ID"), "{outcome:?}");
    assert_eq!(outcome.stdout.lines().count(), 1, "no panes yet: {outcome:?}");
    assert!(cli.socket.exists(), "the started host listens on the given socket");

    let pids = listening_pids(&log);
    assert_eq!(pids.len(), 1, "one host started; log:\n{}", std::fs::read_to_string(&log).unwrap_or_default());
    let pid = pids[0];
    assert!(process_exists(pid), "the host {pid} outlives the command that started it");
    // Detached: in a process group of its own, running `host` on our paths.
    assert_eq!(stat_field(pid, 2).as_deref(), Some(pid.to_string().as_str()), "process group of {pid}");
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let args: Vec<String> = cmdline.split(|&b| b == 0).map(|arg| String::from_utf8_lossy(arg).into_owned()).collect();
    assert!(args.iter().any(|arg| arg == "host"), "{args:?}");
    assert!(args.iter().any(|arg| Path::new(arg) == cli.socket), "{args:?}");

    // The next command uses that host rather than starting another.
    let pane = cli.ok(&["start", "shell"]).trim().to_owned();
    let list = cli.json(&["ls", "--json"]);
    let shell_pid = find_pane(&list, &pane).expect("the pane is listed")["pid"].as_u64().unwrap() as u32;
    assert_eq!(listening_pids(&log), [pid], "still one host");

    // SIGTERM ends the host, which closes its panes and removes its socket.
    let status = Command::new("kill").arg("-TERM").arg(pid.to_string()).status().unwrap();
    assert!(status.success());
    wait_for(
        "the host to exit after SIGTERM",
        || if process_exists(pid) { Err(format!("{pid} runs")) } else { Ok(()) },
    );
    wait_for("the pane's shell to end", || {
        if process_exists(shell_pid) {
            Err(format!("{shell_pid} runs"))
        } else {
            Ok(())
        }
    });
    assert!(!cli.socket.exists(), "the host removed its socket");
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert!(!log_text.contains("panicked"), "{log_text}");
}

#[test]
fn a_second_host_refuses_to_start_on_a_socket_in_use() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);

    // The same state directory: its lock refuses the second host.
    let outcome = cli.run(&["host"]);
    assert_ne!(outcome.code(), Some(0), "a second host started: {outcome:?}");
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("already uses the state directory"), "{outcome:?}");
    assert!(outcome.stderr.contains(&host.socket.display().to_string()), "{outcome:?}");
    // Another state directory, the same socket: the socket refuses it.
    let elsewhere = Cli { state_dir: host.dir.path().join("state2"), ..Cli::for_host(&host) };
    let outcome = elsewhere.run(&["host"]);
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("a host already listens"), "{outcome:?}");
    assert!(outcome.stderr.contains(&host.socket.display().to_string()), "{outcome:?}");

    // The first host still serves, on the same socket.
    assert!(host.socket.exists());
    host.connect(Encoding::Json);
    let pane = cli.ok(&["start", "shell"]).trim().to_owned();
    let list = cli.json(&["ls", "--json"]);
    assert!(find_pane(&list, &pane).is_some(), "{list}");
    cli.ok(&["close", &pane]);
    host.stop();
}

/// A host of another build (here one of revision 3 that a test plays)
/// refuses this command's bincode at the handshake; the command says what
/// that means and what to do, rather than the protocol's own words alone.
#[test]
fn a_host_of_another_revision_is_named_with_what_to_do() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
    let cli = Cli { socket: run.join("host.sock"), state_dir: dir.path().join("state"), home: dir.path().to_owned() };
    let listener = std::os::unix::net::UnixListener::bind(&cli.socket).unwrap();
    let older_host = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        read_frame(&mut stream).expect("a hello");
        let refusal = serde_json::json!({"refused": {
            "code": "PROTOCOL_MISMATCH",
            "message": "a bincode client must speak this host's revision exactly: the client speaks protocol 1 \
                        revision 4, this host revision 3; use a client of revision 3, or the JSON encoding",
            "protocol": 1,
        }});
        write_frame(&mut stream, &serde_json::to_vec(&refusal).unwrap());
    });
    let outcome = cli.run(&["ls"]);
    older_host.join().unwrap();
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("runs another build of panehost"), "{outcome:?}");
    assert!(outcome.stderr.contains("`panehost stop` ends it"), "{outcome:?}");
}
