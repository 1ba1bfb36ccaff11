//! The `panehost` command itself, end to end: the real binary run as a
//! subprocess against a real host, the way an operator or a script uses it.

mod support;

use panehost_ipc::Encoding;
use serde_json::Value;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::*;

// ---------------------------------------------------------------------------
// Running the command
// ---------------------------------------------------------------------------

/// Where a `panehost` command points: a socket, a state directory and a home.
struct Cli {
    socket: PathBuf,
    state_dir: PathBuf,
    home: PathBuf,
}

impl Cli {
    /// The command line aimed at a [`TestHost`].
    fn for_host(host: &TestHost) -> Cli {
        Cli { socket: host.socket.clone(), state_dir: host.state_dir.clone(), home: host.home.clone() }
    }

    /// `panehost --socket S --state-dir D ARGS...` with an environment built
    /// from scratch, like the one TestHost gives its host.
    fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new(panehost_bin());
        command
            .arg("--socket")
            .arg(&self.socket)
            .arg("--state-dir")
            .arg(&self.state_dir)
            .args(args)
            .env_clear()
            .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display()))
            .env("HOME", &self.home)
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8");
        command
    }

    /// Runs the command to its end (within [`WAIT`]) with no input.
    fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Outcome {
        run_to_end(self.command(args), None)
    }

    /// Runs the command to its end with `input` on its standard input.
    fn run_with_input<S: AsRef<OsStr>>(&self, args: &[S], input: &[u8]) -> Outcome {
        run_to_end(self.command(args), Some(input))
    }

    /// Runs the command and fails the test unless it exits 0; returns its
    /// standard output.
    fn ok<S: AsRef<OsStr> + std::fmt::Debug>(&self, args: &[S]) -> String {
        let outcome = self.run(args);
        assert!(outcome.status.success(), "panehost {args:?} failed: {outcome:?}");
        outcome.stdout
    }

    /// Like [`ok`](Self::ok), parsing standard output as one JSON value.
    fn json<S: AsRef<OsStr> + std::fmt::Debug>(&self, args: &[S]) -> Value {
        let stdout = self.ok(args);
        serde_json::from_str(stdout.trim_end())
            .unwrap_or_else(|error| panic!("panehost {args:?} printed no JSON ({error}): {stdout:?}"))
    }
}

/// A child process that is killed (by its own pid) and reaped if the test
/// ends while it still runs.
struct ChildGuard(Option<Child>);

impl ChildGuard {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }

    /// Waits up to [`WAIT`] for the process to exit on its own.
    fn wait_for_exit(&mut self, what: &str) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child().try_wait().unwrap() {
                self.0 = None;
                return status;
            }
            assert!(Instant::now() < deadline, "{what} did not exit within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            if child.try_wait().ok().flatten().is_none() {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// Reads a pipe to its end on a thread.
fn read_all_on_thread(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Spawns `command` with piped output, feeds it `input` (or nothing), and
/// waits up to [`WAIT`] for it to exit; a command still running then is
/// killed and the test fails.
fn run_to_end(mut command: Command, input: Option<&[u8]>) -> Outcome {
    command
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let description = format!("{command:?}");
    let mut guard =
        ChildGuard(Some(command.spawn().unwrap_or_else(|error| panic!("cannot run {description}: {error}"))));
    let writer = input.map(|input| {
        let mut stdin = guard.child().stdin.take().unwrap();
        let input = input.to_vec();
        // Dropping stdin at the end of the thread closes the pipe.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    let stdout = read_all_on_thread(guard.child().stdout.take().unwrap());
    let stderr = read_all_on_thread(guard.child().stderr.take().unwrap());
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = guard.child().try_wait().unwrap() {
            guard.0 = None;
            break status;
        }
        if Instant::now() >= deadline {
            drop(guard); // kills it
            let stdout = String::from_utf8_lossy(&stdout.join().unwrap()).into_owned();
            let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
            panic!("{description} did not exit within {WAIT:?}\nstdout: {stdout}\nstderr: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if let Some(writer) = writer {
        writer.join().unwrap();
    }
    Outcome {
        status,
        stdout: String::from_utf8_lossy(&stdout.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&stderr.join().unwrap()).into_owned(),
    }
}

/// Polls `probe` until it yields a value, failing after [`WAIT`] with the
/// last thing it reported.
fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        match probe() {
            Ok(value) => return value,
            Err(last) => {
                assert!(Instant::now() < deadline, "timed out after {WAIT:?} waiting for {what}; last seen: {last}")
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Decodes standard base64 (with padding), independently of the code
/// under test.
fn base64_decode(text: &str) -> Vec<u8> {
    fn value(byte: u8) -> u32 {
        match byte {
            b'A'..=b'Z' => u32::from(byte - b'A'),
            b'a'..=b'z' => u32::from(byte - b'a') + 26,
            b'0'..=b'9' => u32::from(byte - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            other => panic!("not base64: {other:?}"),
        }
    }
    let bytes = text.as_bytes();
    assert_eq!(bytes.len() % 4, 0, "base64 with padding comes in groups of 4: {text:?}");
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for group in bytes.chunks(4) {
        let padding = group.iter().rev().take_while(|&&byte| byte == b'=').count();
        let mut bits = 0u32;
        for &byte in &group[..4 - padding] {
            bits = (bits << 6) | value(byte);
        }
        bits <<= 6 * padding as u32;
        let decoded = [(bits >> 16) as u8, (bits >> 8) as u8, bits as u8];
        out.extend_from_slice(&decoded[..3 - padding]);
    }
    out
}

/// The pane with this id in an `ls --json` array.
fn find_pane<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list.as_array().expect("ls --json prints an array").iter().find(|pane| pane["id"] == id)
}

/// `p` and eight hex digits.
fn looks_like_pane_id(id: &str) -> bool {
    id.len() == 9 && id.starts_with('p') && id[1..].bytes().all(|byte| byte.is_ascii_hexdigit())
}

// ---------------------------------------------------------------------------
// 1. A pane's life through the command line
// ---------------------------------------------------------------------------

#[test]
fn start_ls_send_inspect_resize_interrupt_close() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);

    // start prints the id, and nothing else.
    let stdout = cli.ok(&["start", "shell"]);
    assert!(stdout.ends_with('\n') && stdout.lines().count() == 1, "start printed {stdout:?}");
    let pane = stdout.trim().to_owned();
    assert!(looks_like_pane_id(&pane), "start printed {stdout:?}");

    // ls: a table with a header and the pane's row.
    let table = cli.ok(&["ls"]);
    let mut lines = table.lines();
    let header = lines.next().expect("ls prints a header");
    for column in ["ID", "RUNTIME", "STATE", "PID", "SIZE", "OFFSET"] {
        assert!(header.contains(column), "ls header {header:?} lacks {column}");
    }
    let row = lines.find(|line| line.split_whitespace().next() == Some(pane.as_str()));
    let row = row.unwrap_or_else(|| panic!("ls does not list {pane}:\n{table}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&cells[1..3], ["shell", "running"], "row {row:?}");
    assert!(cells.contains(&"80x24"), "row {row:?}");

    // ls --json: an array holding the pane.
    let list = cli.json(&["ls", "--json"]);
    let listed = find_pane(&list, &pane).unwrap_or_else(|| panic!("ls --json does not list {pane}: {list}"));
    assert_eq!(listed["runtime"], "shell");
    assert_eq!(listed["state"], "running");
    assert!(listed.get("exit_code").is_none(), "a running pane has no exit code: {listed}");
    assert_eq!(listed["size"], serde_json::json!({"cols": 80, "rows": 24}));
    let pid = listed["pid"].as_u64().expect("pid") as u32;
    assert!(process_exists(pid), "the pane's process {pid} runs");

    // send with the text as an argument, then the screen shows the result.
    let outcome = cli.run(&["send", &pane, "echo cli-$((2+3))", "--enter"]);
    assert!(outcome.status.success(), "{outcome:?}");
    assert_eq!(outcome.stdout, "", "send prints nothing");
    let detail = wait_for("inspect --json to show cli-5", || {
        let detail = cli.json(&["inspect", &pane, "--json"]);
        match detail["screen"]["text"].as_str() {
            Some(text) if text.lines().any(|line| line.trim_end() == "cli-5") => Ok(detail),
            _ => Err(detail.to_string()),
        }
    });
    assert_eq!(detail["id"], pane.as_str());
    assert_eq!(detail["runtime"], "shell");
    assert_eq!(detail["state"], "running");
    assert_eq!(detail["generation"], 1);
    assert_eq!(detail["pid"], pid);
    let offset = detail["offset"].as_u64().expect("offset is a number");
    let screen = &detail["screen"];
    let screen_offset = screen["offset"].as_u64().expect("screen.offset is a number");
    assert!(screen_offset > 0 && screen_offset <= offset, "screen offset {screen_offset}, pane offset {offset}");
    assert_eq!((screen["cols"].as_u64(), screen["rows"].as_u64()), (Some(80), Some(24)));
    let cursor = &screen["cursor"];
    assert!(cursor["row"].as_u64().is_some_and(|row| row < 24), "cursor {cursor}");
    assert!(cursor["col"].as_u64().is_some_and(|col| col < 80), "cursor {cursor}");
    assert!(cursor["visible"].is_boolean(), "cursor {cursor}");
    assert!(screen["formatted_base64"].is_string() && screen["modes"].is_object(), "screen {screen}");

    // inspect without --json: a header line, then the screen.
    let plain = cli.ok(&["inspect", &pane]);
    let first = plain.lines().next().unwrap_or_default();
    assert!(first.starts_with(&format!("{pane} shell running pid {pid} 80x24 gen 1 offset ")), "header {first:?}");
    assert!(plain.lines().any(|line| line.trim_end() == "cli-5"), "inspect shows the screen:\n{plain}");

    // resize: the pane has the new size at once; the process sees it, and
    // the screen model takes it on at the offset where it happened (see
    // `resize_reaches_the_screen_of_a_quiet_pane` for a pane that prints
    // nothing afterwards).
    let outcome = cli.run(&["resize", &pane, "100x30"]);
    assert!(outcome.status.success() && outcome.stdout.is_empty(), "{outcome:?}");
    let detail = cli.json(&["inspect", &pane, "--json"]);
    assert_eq!(detail["size"], serde_json::json!({"cols": 100, "rows": 30}), "{detail}");
    cli.ok(&["send", &pane, "echo size=$(stty size)", "--enter"]);
    wait_for("inspect --json to show size=30 100 on a 100x30 screen", || {
        let detail = cli.json(&["inspect", &pane, "--json"]);
        let screen = &detail["screen"];
        let text = screen["text"].as_str().unwrap_or_default();
        let size = (screen["cols"].as_u64(), screen["rows"].as_u64());
        if text.lines().any(|line| line.trim_end() == "size=30 100") && size == (Some(100), Some(30)) {
            Ok(())
        } else {
            Err(screen.to_string())
        }
    });

    // A zero size is a usage error (exit 2), caught before the host is asked.
    let outcome = cli.run(&["resize", &pane, "0x10"]);
    assert_eq!(outcome.code(), Some(2), "{outcome:?}");
    assert!(outcome.stderr.contains("at least 1"), "{outcome:?}");
    let detail = cli.json(&["inspect", &pane, "--json"]);
    assert_eq!(detail["size"], serde_json::json!({"cols": 100, "rows": 30}), "the refused resize changed nothing");

    // interrupt --json reports the keys it sent and what it observed: the
    // shell's last command may still count as a running turn (the screen
    // heuristic ends it after the output has been quiet), or not.
    let report = cli.json(&["interrupt", &pane, "--json"]);
    assert_eq!(report["pane"], pane.as_str());
    let outcome = report["outcome"].as_str().unwrap_or_default().to_owned();
    assert!(outcome == "turn_cancelled" || outcome == "unconfirmed", "{report}");
    let steps = report["steps"].as_array().expect("steps");
    assert!(!steps.is_empty(), "{report}");
    assert_eq!(steps[0]["action"], "keys");
    assert_eq!(steps[0]["detail"], "\\x03");
    // Plain interrupt says the same in words.
    let plain = cli.ok(&["interrupt", &pane]);
    assert!(plain.starts_with(&format!("{pane}: ")) && plain.contains("keys"), "{plain:?}");

    // close ends the process and forgets the pane.
    let closed = cli.ok(&["close", &pane]);
    assert!(closed.starts_with(&format!("{pane}: ")), "close printed {closed:?}");
    assert!(!process_exists(pid), "close returned while the pane's process {pid} still exists");
    let list = cli.json(&["ls", "--json"]);
    assert!(find_pane(&list, &pane).is_none(), "a closed pane is still listed: {list}");

    // Unknown panes: exit 1 with the host's code on standard error.
    for unknown in [pane.as_str(), "p00000000"] {
        let outcome = cli.run(&["inspect", unknown, "--json"]);
        assert_eq!(outcome.code(), Some(1), "{outcome:?}");
        assert!(outcome.stderr.contains("UNKNOWN_PANE"), "{outcome:?}");
        assert_eq!(outcome.stdout, "", "{outcome:?}");
    }
    let outcome = cli.run(&["close", "p00000000"]);
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("error: UNKNOWN_PANE: "), "{outcome:?}");

    host.stop();
}

#[test]
fn resize_reaches_the_screen_of_a_quiet_pane() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    // /bin/sh (dash) prints nothing on SIGWINCH: no output follows the resize.
    let pane = cli.ok(&["start", "shell"]).trim().to_owned();
    cli.ok(&["send", &pane, "echo ready", "--enter"]);
    wait_for("the shell to be ready", || {
        let detail = cli.json(&["inspect", &pane, "--json"]);
        let text = detail["screen"]["text"].as_str().unwrap_or_default();
        if text.lines().any(|line| line.trim_end() == "ready") && detail["screen"]["offset"] == detail["offset"] {
            Ok(())
        } else {
            Err(detail.to_string())
        }
    });
    cli.ok(&["resize", &pane, "100x30"]);
    let detail = wait_for("inspect --json to show a 100x30 screen", || {
        let detail = cli.json(&["inspect", &pane, "--json"]);
        let size = (detail["screen"]["cols"].as_u64(), detail["screen"]["rows"].as_u64());
        if size == (Some(100), Some(30)) {
            Ok(detail)
        } else {
            Err(format!("pane size {}, screen {size:?}, offset {}", detail["size"], detail["offset"]))
        }
    });
    assert_eq!(detail["size"], serde_json::json!({"cols": 100, "rows": 30}));
    cli.ok(&["close", &pane]);
    host.stop();
}

// ---------------------------------------------------------------------------
// 2. send from standard input
// ---------------------------------------------------------------------------

#[test]
fn send_reads_standard_input_when_no_text_is_given() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let pane = cli.ok(&["start", "shell"]).trim().to_owned();

    // No TEXT argument: all of standard input, newline included.
    let outcome = cli.run_with_input(&["send", &pane], b"echo from-stdin-$((6*7))\n");
    assert!(outcome.status.success(), "{outcome:?}");
    // `-` means standard input too; --enter presses Enter after it.
    let outcome = cli.run_with_input(&["send", &pane, "-", "--enter"], b"echo dash-$((5*5))");
    assert!(outcome.status.success(), "{outcome:?}");

    wait_for("both lines on the screen", || {
        let text = cli.json(&["inspect", &pane, "--json"])["screen"]["text"].as_str().unwrap_or_default().to_owned();
        let has = |wanted: &str| text.lines().any(|line| line.trim_end() == wanted);
        if has("from-stdin-42") && has("dash-25") {
            Ok(())
        } else {
            Err(text)
        }
    });

    cli.ok(&["close", &pane]);
    host.stop();
}

// ---------------------------------------------------------------------------
// 3. events --json
// ---------------------------------------------------------------------------

#[test]
fn events_json_replays_contiguous_output_then_exit_and_end() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let started = cli.json(&["start", "shell", "--json", "--", "sh", "-c", "printf \"a\\nb\\n\"; exit 4"]);
    let pane = started["id"].as_str().expect("start --json has the id").to_owned();
    assert!(looks_like_pane_id(&pane), "{started}");
    assert_eq!(started["runtime"], "shell");
    assert_eq!(started["generation"], 1);

    // From offset 0, the stream ends by itself once the process has exited.
    let outcome = cli.run(&["events", &pane, "--json", "--from", "0"]);
    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
    let lines: Vec<Value> = outcome
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("not a JSON line ({error}): {line:?}")))
        .collect();
    for line in &lines {
        assert!(line.is_object() && line["type"].is_string(), "every line is an object with a type: {line}");
    }

    let first = lines.first().expect("at least one line");
    assert_eq!(first["type"], "start", "{first}");
    assert_eq!(first["kind"], "replay", "{first}");
    assert_eq!(first["offset"], 0, "{first}");
    assert_eq!(first["generation"], 1, "{first}");

    let mut next_offset = 0u64;
    let mut output = Vec::new();
    let mut exited = None;
    for line in &lines[1..] {
        match line["type"].as_str().unwrap() {
            "output" => {
                assert!(exited.is_none(), "output after exited: {line}");
                assert_eq!(line["offset"].as_u64(), Some(next_offset), "output must be contiguous: {line}");
                let bytes = base64_decode(line["data_base64"].as_str().expect("data_base64"));
                assert!(!bytes.is_empty(), "{line}");
                assert_eq!(line["data"].as_str(), Some(String::from_utf8_lossy(&bytes).as_ref()), "{line}");
                next_offset += bytes.len() as u64;
                output.extend_from_slice(&bytes);
            }
            "exited" => {
                assert!(exited.is_none(), "two exited lines");
                exited = Some(line.clone());
            }
            "ended" => {}
            other => panic!("unexpected line type {other}: {line}"),
        }
    }
    let text = String::from_utf8_lossy(&output);
    assert!(text.contains("a\r\nb"), "output {text:?}");
    let exited = exited.unwrap_or_else(|| panic!("no exited line in {:?}", outcome.stdout));
    assert_eq!(exited["exit_code"], 4, "{exited}");
    assert_eq!(exited["signal"], Value::Null, "{exited}");
    assert_eq!(exited["offset"].as_u64(), Some(next_offset), "exited comes after every byte: {exited}");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "ended", "the stream ends with ended: {last}");
    assert_eq!(last["reason"], "exited", "{last}");
    assert_eq!(lines.iter().filter(|line| line["type"] == "ended").count(), 1);

    // Without --json: exactly the bytes, nothing else.
    let raw = cli.run(&["events", &pane, "--from", "0"]);
    assert_eq!(raw.code(), Some(0), "{raw:?}");
    assert_eq!(raw.stdout.as_bytes(), output.as_slice());

    // The pane stays listed as exited until closed; close reports the status.
    let list = cli.json(&["ls", "--json"]);
    let listed = find_pane(&list, &pane).expect("an exited pane is listed");
    assert_eq!(listed["state"], "exited", "{listed}");
    assert_eq!(listed["exit_code"], 4, "{listed}");
    assert_eq!(listed["offset"].as_u64(), Some(next_offset), "{listed}");
    let closed = cli.json(&["close", &pane, "--json"]);
    assert_eq!(closed, serde_json::json!({"id": pane, "exit_code": 4, "signal": null}));
    host.stop();
}

// ---------------------------------------------------------------------------
// 4. runtimes --json
// ---------------------------------------------------------------------------

#[test]
fn runtimes_lists_shell_and_the_fixture_with_their_limits() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let runtimes = cli.json(&["runtimes", "--json"]);
    let runtimes = runtimes.as_array().expect("an array");
    let runtime = |id: &str| {
        runtimes.iter().find(|runtime| runtime["id"] == id).unwrap_or_else(|| panic!("no {id} in {runtimes:?}")).clone()
    };
    let strings = |value: &Value| -> Vec<String> {
        value.as_array().expect("a list").iter().map(|item| item.as_str().expect("a string").to_owned()).collect()
    };

    let shell = runtime("shell");
    assert_eq!(shell["supported"], true, "{shell}");
    assert_eq!(shell["available"], true, "{shell}");
    assert_eq!(shell["unavailable_reason"], Value::Null, "{shell}");
    assert!(strings(&shell["resume_modes"]).is_empty(), "{shell}");
    let limitations = strings(&shell["limitations"]);
    for code in ["NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH"] {
        assert!(limitations.iter().any(|l| l == code), "shell lacks {code}: {shell}");
    }

    let fixture = runtime("fixture");
    assert_eq!(fixture["supported"], true, "{fixture}");
    assert_eq!(fixture["available"], true, "the fixture is on the host's PATH: {fixture}");
    let path = fixture["path"].as_str().expect("an available runtime has a path");
    assert_eq!(Path::new(path), bin_dir().join("panehost-fixture-agent"), "{fixture}");
    assert_eq!(strings(&fixture["resume_modes"]), ["REFERENCE", "PROVIDER_SELECTION"], "{fixture}");
    assert_eq!(
        strings(&fixture["limitations"]),
        ["PERMISSION_PROFILE_UNENFORCED"],
        "it observes completion and resumes exactly, and enforces no permission profile: {fixture}"
    );
    assert_eq!(fixture["completion"], "terminal_notification", "{fixture}");

    // The table says the same.
    let table = cli.ok(&["runtimes"]);
    let row = |id: &str| {
        table
            .lines()
            .find(|line| line.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no {id} row in\n{table}"))
            .to_owned()
    };
    assert!(row("shell").contains("NATIVE_RESUME_UNSUPPORTED"), "{table}");
    assert!(row("fixture").contains("REFERENCE,PROVIDER_SELECTION"), "{table}");
    assert!(row("fixture").contains(path), "{table}");
    host.stop();
}

// ---------------------------------------------------------------------------
// 5. control: the JSON-lines bridge
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

// ---------------------------------------------------------------------------
// 6. Autostart, and one host per socket
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
}

impl Drop for AutostartedHost {
    fn drop(&mut self) {
        for pid in listening_pids(&self.log) {
            if !process_exists(pid) {
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
    let _cleanup = AutostartedHost { log: log.clone() };
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

    let outcome = cli.run(&["host"]);
    assert_ne!(outcome.code(), Some(0), "a second host started: {outcome:?}");
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
