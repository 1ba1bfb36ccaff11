//! The `panehost` command itself, end to end: the real binary run as a
//! subprocess against a real host, the way an operator or a script uses it.

mod support;

use panehost_ipc::{Event, ExitStatus, PaneState, Response, StreamStart};
use serde_json::{json, Value};
use std::path::Path;
use support::command::*;
use support::*;

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

/// What a `--json` command printed, decoded as the host's answer it is:
/// the protocol's JSON of the `key` answer, less that key.
fn decode_answer(key: &str, printed: &Value) -> Response {
    serde_json::from_value(json!({ key: printed }))
        .unwrap_or_else(|error| panic!("not the protocol's `{key}` answer ({error}): {printed}"))
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

    // ls --json: the host's `panes` answer, holding the pane.
    let list = cli.json(&["ls", "--json"]);
    assert!(matches!(decode_answer("panes", &list), Response::Panes { .. }));
    let listed = find_pane(&list, &pane).unwrap_or_else(|| panic!("ls --json does not list {pane}: {list}"));
    assert_eq!(listed["runtime"], "shell");
    assert_eq!(listed["state"], "running");
    assert_eq!(listed["size"], json!({"cols": 80, "rows": 24}));
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
    // inspect --json: the host's `inspected` answer, the pane and its screen.
    let Response::Inspected(inspected) = decode_answer("inspected", &detail) else { unreachable!() };
    assert_eq!(inspected.pane.id.as_str(), pane.as_str());
    assert_eq!(detail["pane"]["id"], pane.as_str());
    assert_eq!(detail["pane"]["runtime"], "shell");
    assert_eq!(detail["pane"]["state"], "running");
    assert_eq!(detail["pane"]["generation"], 1);
    assert_eq!(detail["pane"]["pid"], pid);
    let offset = detail["pane"]["offset"].as_u64().expect("offset is a number");
    let screen = &detail["screen"];
    let screen_offset = screen["offset"].as_u64().expect("screen.offset is a number");
    assert!(screen_offset > 0 && screen_offset <= offset, "screen offset {screen_offset}, pane offset {offset}");
    assert_eq!(screen["size"], json!({"cols": 80, "rows": 24}));
    let cursor = &screen["cursor"];
    assert!(cursor["row"].as_u64().is_some_and(|row| row < 24), "cursor {cursor}");
    assert!(cursor["col"].as_u64().is_some_and(|col| col < 80), "cursor {cursor}");
    assert!(cursor["visible"].is_boolean(), "cursor {cursor}");
    assert!(screen["formatted"].is_string() && screen["modes"].is_object(), "screen {screen}");
    let formatted = base64_decode(screen["formatted"].as_str().unwrap());
    assert_eq!(formatted, inspected.screen.formatted.as_slice(), "formatted is the screen's bytes in base64");

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
    assert_eq!(detail["pane"]["size"], json!({"cols": 100, "rows": 30}), "{detail}");
    cli.ok(&["send", &pane, "echo size=$(stty size)", "--enter"]);
    wait_for("inspect --json to show size=30 100 on a 100x30 screen", || {
        let detail = cli.json(&["inspect", &pane, "--json"]);
        let screen = &detail["screen"];
        let text = screen["text"].as_str().unwrap_or_default();
        if text.lines().any(|line| line.trim_end() == "size=30 100")
            && screen["size"] == json!({"cols": 100, "rows": 30})
        {
            Ok(())
        } else {
            Err(screen.to_string())
        }
    });

    // A size out of bounds is a usage error (exit 2), caught before the
    // host is asked.
    let outcome = cli.run(&["resize", &pane, "0x10"]);
    assert_eq!(outcome.code(), Some(2), "{outcome:?}");
    assert!(outcome.stderr.contains("columns from 2 to 1000"), "{outcome:?}");
    let outcome = cli.run(&["resize", &pane, "65535x65535"]);
    assert_eq!(outcome.code(), Some(2), "{outcome:?}");
    let detail = cli.json(&["inspect", &pane, "--json"]);
    assert_eq!(detail["pane"]["size"], json!({"cols": 100, "rows": 30}), "the refused resize changed nothing");

    // interrupt --json reports the keys it sent and what it observed: the
    // shell's last command may still count as a running turn (the screen
    // heuristic ends it after the output has been quiet), or not.
    let report = cli.json(&["interrupt", &pane, "--json"]);
    assert!(matches!(decode_answer("interrupted", &report), Response::Interrupted(_)), "{report}");
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
        if text.lines().any(|line| line.trim_end() == "ready") && detail["screen"]["offset"] == detail["pane"]["offset"]
        {
            Ok(())
        } else {
            Err(detail.to_string())
        }
    });
    cli.ok(&["resize", &pane, "100x30"]);
    let detail = wait_for("inspect --json to show a 100x30 screen", || {
        let detail = cli.json(&["inspect", &pane, "--json"]);
        let size = &detail["screen"]["size"];
        if *size == json!({"cols": 100, "rows": 30}) {
            Ok(detail)
        } else {
            Err(format!("pane size {}, screen {size}, offset {}", detail["pane"]["size"], detail["pane"]["offset"]))
        }
    });
    assert_eq!(detail["pane"]["size"], json!({"cols": 100, "rows": 30}));
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
    assert!(matches!(decode_answer("started", &started), Response::Started(_)), "{started}");
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
        let keys: Vec<&String> = line.as_object().map(|object| object.keys().collect()).unwrap_or_default();
        assert!(keys == ["start"] || keys == ["event"], "every line is an object with one key, start or event: {line}");
    }

    // The stream's start: the `subscribed` answer's pane, generation and start.
    let first = lines.first().expect("at least one line");
    assert_eq!(first, &json!({"start": {"pane": pane, "generation": 1, "start": {"replay": {"from": 0}}}}));
    let start: StreamStart = serde_json::from_value(first["start"]["start"].clone()).unwrap();
    assert_eq!(start, StreamStart::Replay { from: 0 });

    // Then each event, as the host sent it.
    let mut next_offset = 0u64;
    let mut output = Vec::new();
    let mut exited = None;
    let mut ended = Vec::new();
    for line in &lines[1..] {
        let event: Event = serde_json::from_value(line["event"].clone())
            .unwrap_or_else(|error| panic!("not the protocol's event ({error}): {line}"));
        match event {
            Event::Output { offset, data } => {
                assert!(exited.is_none(), "output after exited: {line}");
                assert_eq!(offset, next_offset, "output must be contiguous: {line}");
                let bytes = base64_decode(line["event"]["output"]["data"].as_str().expect("data"));
                assert!(!bytes.is_empty(), "{line}");
                assert_eq!(bytes, data.as_slice(), "{line}");
                next_offset += bytes.len() as u64;
                output.extend_from_slice(&bytes);
            }
            Event::Exited { status, offset } => {
                assert!(exited.is_none(), "two exited lines");
                exited = Some((status, offset));
            }
            Event::Ended { reason } => ended.push(reason),
            other => panic!("unexpected event {other:?}: {line}"),
        }
    }
    let text = String::from_utf8_lossy(&output);
    assert!(text.contains("a\r\nb"), "output {text:?}");
    let (status, offset) = exited.unwrap_or_else(|| panic!("no exited line in {:?}", outcome.stdout));
    assert_eq!(status, ExitStatus { code: 4, signal: None });
    assert_eq!(offset, next_offset, "exited comes after every byte");
    let last = lines.last().unwrap();
    assert_eq!(last, &json!({"event": {"ended": {"reason": "exited"}}}), "the stream ends with ended");
    assert_eq!(ended, ["exited"]);

    // Without --json: exactly the bytes, nothing else.
    let raw = cli.run(&["events", &pane, "--from", "0"]);
    assert_eq!(raw.code(), Some(0), "{raw:?}");
    assert_eq!(raw.stdout.as_bytes(), output.as_slice());

    // The pane stays listed as exited until closed; close reports the status.
    let list = cli.json(&["ls", "--json"]);
    let listed = find_pane(&list, &pane).expect("an exited pane is listed");
    assert_eq!(listed["state"], json!({"exited": {"code": 4, "signal": null}}), "{listed}");
    let state: PaneState = serde_json::from_value(listed["state"].clone()).unwrap();
    assert_eq!(state, PaneState::Exited(ExitStatus { code: 4, signal: None }));
    assert_eq!(listed["offset"].as_u64(), Some(next_offset), "{listed}");
    let closed = cli.json(&["close", &pane, "--json"]);
    // The sweep found nothing left of the pane (its program had exited).
    assert_eq!(closed["pane"], json!(pane), "{closed}");
    assert_eq!(closed["status"], json!({"code": 4, "signal": null}), "{closed}");
    assert_eq!((&closed["sweep"]["ended"], &closed["sweep"]["survivors"]), (&json!(0), &json!([])), "{closed}");
    assert!(matches!(decode_answer("closed", &closed), Response::Closed { .. }));
    host.stop();
}

// ---------------------------------------------------------------------------
// 4. runtimes --json
// ---------------------------------------------------------------------------

#[test]
fn runtimes_lists_shell_and_the_fixture_with_their_limits() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    // The tests' own fixture runtime is listed only when asked for.
    let listed = cli.json(&["runtimes", "--json"]);
    assert!(listed["runtimes"].as_array().unwrap().iter().all(|runtime| runtime["id"] != "fixture"), "{listed}");
    let runtimes = cli.json(&["runtimes", "--json", "--all"]);
    assert!(matches!(decode_answer("runtimes", &runtimes), Response::Runtimes { .. }));
    let runtimes = runtimes["runtimes"].as_array().expect("the `runtimes` answer: {\"runtimes\": [...]}");
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

    // The table fits 80 columns and leaves the tests' runtime out...
    let narrow = cli.ok(&["runtimes"]);
    assert!(narrow.lines().all(|line| line.chars().count() <= 80), "{narrow}");
    assert!(!narrow.lines().any(|line| line.starts_with("fixture ")), "{narrow}");
    // ...and with --wide --all says the same as the JSON.
    let table = cli.ok(&["runtimes", "--wide", "--all"]);
    let row = |id: &str| {
        table
            .lines()
            .find(|line| line.split_whitespace().next() == Some(id))
            .unwrap_or_else(|| panic!("no {id} row in\n{table}"))
            .to_owned()
    };
    assert!(row("shell").contains("NATIVE_RESUME_UNSUPPORTED"), "{table}");
    assert!(row("fixture").contains("REFERENCE,PROVIDER_SELECTION"), "{table}");
    // No completion receipt yet: the row says which gate and what to run.
    assert!(row("fixture").contains("not ready: no receipt"), "{table}");
    assert!(row("fixture").contains("panehost runtimes --probe fixture"), "{table}");

    // Taking one: refused without the weaker boundary (the fixture has no
    // read-only mode), then passed, and the fixture is ready.
    let refused = cli.run(&["runtimes", "--probe", "fixture"]);
    assert_eq!(refused.code(), Some(1), "{refused:?}");
    assert!(refused.stderr.contains("PERMISSION_PROFILE_UNENFORCED"), "{refused:?}");
    let receipt = cli.json(&["runtimes", "--probe", "fixture", "--accept-weaker-boundary", "--json"]);
    assert!(matches!(decode_answer("receipt", &receipt), Response::Receipt(_)), "{receipt}");
    assert_eq!(receipt["passed"], true, "{receipt}");
    assert_eq!(receipt["read_only_enforced"], false, "{receipt}");
    let table = cli.ok(&["runtimes", "--wide", "--all"]);
    let fixture_row = table.lines().find(|line| line.starts_with("fixture ")).unwrap();
    assert!(fixture_row.contains(" ready ") && fixture_row.contains(path), "{table}");
    host.stop();
}
