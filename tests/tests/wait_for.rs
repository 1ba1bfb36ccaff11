//! `wait_for`: a request waits until a pane's screen, or its output,
//! matches a pattern; says where; and otherwise says why not (timeout,
//! exit, a pattern it does not take), while the connection goes on
//! serving.

mod support;

use panehost_ipc::{Encoding, ErrorBody, PaneId, Request, Response, WaitForParams, WaitMatch, WaitTarget};
use support::command::*;
use support::*;

fn wait(conn: &mut Connection, params: WaitForParams) -> Result<WaitMatch, ErrorBody> {
    match conn.call(Request::WaitFor(params))? {
        Response::Waited(found) => Ok(found),
        other => panic!("{other:?}"),
    }
}

fn params(pane: &PaneId, pattern: &str, target: WaitTarget) -> WaitForParams {
    WaitForParams { pane: pane.clone(), pattern: pattern.into(), target, ..Default::default() }
}

#[test]
fn the_screen_and_the_output_are_waited_for_in_both_encodings() {
    let host = TestHost::start();
    for encoding in [Encoding::Json, Encoding::Bincode] {
        let mut conn = host.connect(encoding);
        // A program that prints a coloured word once it reads a line.
        let script = "stty -echo; read line; printf 'ready: \\033[1mgo\\033[0m-%s\\n' \"$line\"; sleep 100";
        let pane = conn.start(start_params("shell", &["sh", "-c", script])).id;

        // Output from now on: sent before the line is typed, answered once
        // the program prints. The escape sequences are in the output.
        let waiting = conn.send(Request::WaitFor(params(&pane, r"go\x1b\[0m-(\d+)", WaitTarget::Output)));
        // Typed without waiting for its answer: the wait's may come first.
        let line =
            panehost_ipc::SendParams { pane: pane.clone(), text: "42".into(), enter: true, ..Default::default() };
        let typed = conn.send(Request::Send(line));
        let mut found = None;
        let mut sent = false;
        while found.is_none() || !sent {
            match conn.next_answer() {
                (id, Ok(Response::Waited(waited))) if id == waiting => found = Some(waited),
                (id, Ok(Response::Sent { .. })) if id == typed => sent = true,
                (id, other) => panic!("answer to {id}: {other:?}"),
            }
        }
        let found = found.unwrap();
        assert_eq!(found.matched, "go\x1b[0m-42", "{encoding:?}");
        assert_eq!(found.target, WaitTarget::Output);
        // The offset is just past the match: the output up to it ends with it.
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
        assert!(found.offset <= detail.pane.offset, "{found:?} {detail:?}");

        // The screen shows the word without its escape sequences; already
        // there, so answered at once.
        let on_screen = wait(&mut conn, params(&pane, r"ready: go-\d+", WaitTarget::Screen)).unwrap();
        assert_eq!(on_screen.matched, "ready: go-42");
        assert!(on_screen.offset >= found.offset, "{on_screen:?} after {found:?}");

        // Output searched from the start finds it too; from the pane's end,
        // nothing new comes: a timeout that says what it read.
        let from_start = WaitForParams { from: Some(0), ..params(&pane, "ready", WaitTarget::Output) };
        assert_eq!(wait(&mut conn, from_start).unwrap().matched, "ready");
        let quiet = WaitForParams { timeout_ms: Some(300), ..params(&pane, "ready", WaitTarget::Output) };
        let timeout = wait(&mut conn, quiet).unwrap_err();
        assert_eq!(timeout.code, "WAIT_TIMEOUT", "{timeout:?}");
        assert!(timeout.message.contains("within 300 ms"), "{}", timeout.message);
        let unseen = WaitForParams { timeout_ms: Some(300), ..params(&pane, "never shown", WaitTarget::Screen) };
        assert_eq!(wait(&mut conn, unseen).unwrap_err().code, "WAIT_TIMEOUT");
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn a_wait_ends_when_the_process_exits_first() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sh", "-c", "read line; echo bye; exit 3"])).id;
    for target in [WaitTarget::Output, WaitTarget::Screen] {
        let waiting = conn.send(Request::WaitFor(params(&pane, "never printed", target)));
        // Typed without waiting for its answer, which may come after the
        // wait's.
        let typed = (target == WaitTarget::Output).then(|| {
            let line =
                panehost_ipc::SendParams { pane: pane.clone(), text: "x".into(), enter: true, ..Default::default() };
            conn.send(Request::Send(line))
        });
        let mut error = None;
        let mut sent = typed.is_none();
        while error.is_none() || !sent {
            match conn.next_answer() {
                (id, Err(failed)) if id == waiting => error = Some(failed),
                (id, Ok(Response::Sent { .. })) if Some(id) == typed => sent = true,
                (id, other) => panic!("answer to {id}: {other:?}"),
            }
        }
        let error = error.unwrap();
        assert_eq!(error.code, "PANE_EXITED", "{target:?}: {error:?}");
        assert!(error.message.contains("code 3"), "{}", error.message);
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn patterns_timeouts_and_offsets_out_of_bounds_are_refused() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &["sleep", "100"])).id;
    let refused = |conn: &mut Connection, params: WaitForParams| wait(conn, params).unwrap_err();
    for (pattern, why) in [
        ("", "empty"),
        ("(unclosed", "regular expression"),
        (r"(\w{1000}){1000}", "size limit"),
        (&"a".repeat(1025)[..], "at most 1024"),
    ] {
        let error = refused(&mut conn, params(&pane, pattern, WaitTarget::Screen));
        assert_eq!(error.code, "INVALID_ARGUMENT", "{pattern}");
        assert!(error.message.contains(why), "{pattern}: {}", error.message);
    }
    let long = WaitForParams { timeout_ms: Some(86_400_001), ..params(&pane, "x", WaitTarget::Screen) };
    assert_eq!(refused(&mut conn, long).code, "INVALID_ARGUMENT");
    let ahead = WaitForParams { from: Some(1 << 40), ..params(&pane, "x", WaitTarget::Output) };
    assert_eq!(refused(&mut conn, ahead).code, "OFFSET_OUT_OF_RANGE");
    let nobody = params(&PaneId("p00000000".into()), "x", WaitTarget::Screen);
    assert_eq!(refused(&mut conn, nobody).code, "UNKNOWN_PANE");
    // The longest pattern and the longest timeout are taken (and the
    // wait is let go of by closing the pane).
    let longest =
        WaitForParams { timeout_ms: Some(86_400_000), ..params(&pane, &"b".repeat(1024), WaitTarget::Screen) };
    let waiting = conn.send(Request::WaitFor(longest));
    let closing = conn.send(Request::Close { pane });
    // The wait sees the exit before the close has answered, or after.
    for _ in 0..2 {
        match conn.next_answer() {
            (id, answer) if id == waiting => assert_eq!(answer.unwrap_err().code, "PANE_EXITED"),
            (id, answer) if id == closing => assert!(matches!(answer, Ok(Response::Closed { .. })), "{answer:?}"),
            other => panic!("{other:?}"),
        }
    }
    host.stop();
}

#[test]
fn panehost_wait_prints_what_matched() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let pane = cli.ok(&["start", "shell", "--", "sh", "-c", "echo build-$((6*7))-done; sleep 100"]).trim().to_owned();
    assert_eq!(cli.ok(&["wait", &pane, r"build-\d+-done"]).trim(), "build-42-done");
    let found: WaitMatch = cli.answer(&["wait", &pane, "build", "--output", "--from", "0", "--json"]);
    assert_eq!(
        (found.pane.as_str(), found.target, found.matched.as_str()),
        (pane.as_str(), WaitTarget::Output, "build")
    );
    let outcome = cli.run(&["wait", &pane, "absent", "--timeout", "0"]);
    assert_ne!(outcome.code(), Some(0), "{outcome:?}");
    assert!(outcome.stderr.contains("WAIT_TIMEOUT"), "{outcome:?}");
    cli.ok(&["close", &pane]);
    host.stop();
}
