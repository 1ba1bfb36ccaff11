//! `watch`: one subscription that sees every pane of the host arrive,
//! change activity, size and title, exit and leave, in the order it
//! happened, in both encodings.

mod support;

use panehost_ipc::screen::MAX_SNAPSHOT_TITLE_LEN;
use panehost_ipc::{Encoding, Event, ExitStatus, PaneId, PaneSummary, Request, Response, Size, StartParams};
use support::*;

/// A stand-in for Claude Code that runs the hooks it is given through
/// `--settings`, as the real one does: UserPromptSubmit when a prompt
/// arrives, Stop after answering. The prompt `approve` first asks the user
/// for permission (a Notification that names it), `question` asks for an
/// answer (a Notification that does not); either waits for the user's next
/// line before the turn ends.
const ASKING_CLAUDE: &str = r#"#!/usr/bin/env python3
import json, subprocess, sys
args = sys.argv[1:]
settings = json.loads(args[args.index("--settings") + 1])
def hook(name, payload):
    for entry in settings["hooks"].get(name, []):
        for h in entry["hooks"]:
            subprocess.run(h["command"], shell=True, input=json.dumps(payload).encode(), check=False)
asks = {"approve": "Claude needs your permission to use Bash", "question": "Claude is waiting for your input"}
while True:
    sys.stdout.write("claude> "); sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    prompt = line.strip().replace("\x1b[200~", "").replace("\x1b[201~", "")
    hook("UserPromptSubmit", {"prompt": prompt})
    if prompt in asks:
        hook("Notification", {"message": asks[prompt]})
        sys.stdout.write("answer? "); sys.stdout.flush()
        answer = sys.stdin.readline().strip().replace("\x1b[200~", "").replace("\x1b[201~", "")
        print("claude was told: " + answer)
    else:
        print("claude says: " + prompt.upper())
    sys.stdout.flush()
    hook("Stop", {"stop_hook_active": False})
"#;

fn watch(conn: &mut Connection) -> (u64, Vec<PaneSummary>) {
    match conn.ok(Request::Watch {}) {
        Response::Watching { subscription, panes } => (subscription, panes),
        other => panic!("{other:?}"),
    }
}

/// The events of `subscription` about `pane`, read until `done` says the
/// last one wanted has come; `pane_changed` is left out (a shell may set
/// its title at any prompt), unless `done` looks for it.
fn news_of(conn: &mut Connection, subscription: u64, pane: &PaneId, done: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let (id, event) = conn.next_event();
        if id != subscription {
            continue;
        }
        let about = match &event {
            Event::PaneStarted { pane: summary } => &summary.id,
            Event::PaneActivity { pane, .. } | Event::PaneExited { pane, .. } | Event::PaneEnded { pane, .. } => pane,
            Event::PaneChanged { pane, .. } if done(&event) => pane,
            Event::PaneChanged { .. } => continue,
            other => panic!("a watch subscription sent {other:?}"),
        };
        if about != pane {
            continue;
        }
        let last = done(&event);
        seen.push(event);
        if last {
            return seen;
        }
    }
}

/// What each event says, in a line.
fn told(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event {
            Event::PaneStarted { pane } => format!("started {}", pane.runtime),
            Event::PaneActivity { activity, .. } => format!("activity {activity}"),
            Event::PaneExited { status, .. } => format!("exited {}", status.code),
            Event::PaneEnded { reason, .. } => format!("ended {reason}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_watcher_sees_a_pane_start_work_exit_and_leave() {
    let host = TestHost::start();
    for encoding in [Encoding::Json, Encoding::Bincode] {
        let mut watcher = host.connect(encoding);
        let (subscription, panes) = watch(&mut watcher);
        assert!(panes.is_empty(), "{panes:?}");

        // Another client does the work.
        let mut client = host.connect(Encoding::Json);
        let pane = client.start(start_params("shell", &[])).id;
        let started = news_of(&mut watcher, subscription, &pane, |e| matches!(e, Event::PaneStarted { .. }));
        let Event::PaneStarted { pane: summary } = &started[0] else { unreachable!() };
        assert_eq!((summary.id.clone(), summary.runtime.as_str()), (pane.clone(), "shell"));

        // A turn: busy while the command runs, idle once it has ended.
        match client.ok(Request::Ask { pane: pane.clone(), text: "echo watched-$((40+2))".into(), timeout_ms: None }) {
            Response::Answered(report) => assert!(report.added_text.contains("watched-42"), "{report:?}"),
            other => panic!("{other:?}"),
        }
        let turn = news_of(
            &mut watcher,
            subscription,
            &pane,
            |e| matches!(e, Event::PaneActivity { activity, .. } if activity == "idle"),
        );
        assert_eq!(told(&turn), ["activity busy", "activity idle"], "{encoding:?}");

        // The shell exits with 3: the pane stays until it is closed.
        client.type_line(&pane, "exit 3");
        let exit = news_of(&mut watcher, subscription, &pane, |e| matches!(e, Event::PaneExited { .. }));
        let Some(Event::PaneExited { status, .. }) = exit.last() else { unreachable!() };
        assert_eq!(*status, ExitStatus { code: 3, signal: None });
        assert!(exit.iter().all(|e| matches!(e, Event::PaneActivity { .. } | Event::PaneExited { .. })), "{exit:?}");

        client.ok(Request::Close { pane: pane.clone() });
        let ended = news_of(&mut watcher, subscription, &pane, |e| matches!(e, Event::PaneEnded { .. }));
        assert_eq!(told(&ended).last().map(String::as_str), Some("ended closed"), "{ended:?}");

        match watcher.ok(Request::Unsubscribe { subscription }) {
            Response::Unsubscribed { subscription: ended } => assert_eq!(ended, subscription),
            other => panic!("{other:?}"),
        }
        let (id, last) = watcher.next_event();
        assert_eq!((id, last), (subscription, Event::Ended { reason: "unsubscribed".into() }));
    }
    host.stop();
}

/// The next `pane_changed` of `pane` on `subscription`, and every other
/// piece of news of the pane that came before it.
fn next_change(conn: &mut Connection, subscription: u64, pane: &PaneId) -> (Size, String) {
    let news = news_of(conn, subscription, pane, |e| matches!(e, Event::PaneChanged { .. }));
    match news.last() {
        Some(Event::PaneChanged { size, title, .. }) => (*size, title.clone()),
        _ => unreachable!(),
    }
}

/// The title `list` shows for `pane`.
fn listed_title(conn: &mut Connection, pane: &PaneId) -> String {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes.into_iter().find(|p| &p.id == pane).expect("listed").title,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_watcher_is_told_a_panes_new_size_and_title_and_only_changes() {
    let host = TestHost::start();
    for encoding in [Encoding::Json, Encoding::Bincode] {
        let mut watcher = host.connect(encoding);
        let (subscription, _) = watch(&mut watcher);
        let mut client = host.connect(Encoding::Json);
        let pane = client.start(start_params("shell", &[])).id;
        // Once the shell has read a line, whatever title its start set has
        // been told: what follows is this test's doing.
        client.ok(Request::Ask { pane: pane.clone(), text: "true".into(), timeout_ms: None });
        let title_before = listed_title(&mut client, &pane);

        let wide = Size { cols: 1000, rows: 250 };
        client.ok(Request::Resize { pane: pane.clone(), size: wide });
        assert_eq!(next_change(&mut watcher, subscription, &pane), (wide, title_before.clone()), "{encoding:?}");

        // The same size again changes nothing and is not told: the next
        // change is the title.
        client.ok(Request::Resize { pane: pane.clone(), size: wide });
        client.type_line(&pane, r"printf '\033]2;%s\007' watched-title");
        assert_eq!(next_change(&mut watcher, subscription, &pane), (wide, "watched-title".to_owned()), "{encoding:?}");

        // A title over the bound is told cut to it, as `list` shows it.
        client.type_line(&pane, &format!(r"printf '\033]2;%s\007' $(printf 'é%.0s' $(seq {MAX_SNAPSHOT_TITLE_LEN}))"));
        let (_, long) = next_change(&mut watcher, subscription, &pane);
        assert!(long.len() <= MAX_SNAPSHOT_TITLE_LEN && long.len() > MAX_SNAPSHOT_TITLE_LEN - 2, "{}", long.len());
        assert!(long.chars().all(|c| c == 'é'), "cut on a character boundary");
        assert_eq!(listed_title(&mut client, &pane), long, "{encoding:?}");
        client.ok(Request::Close { pane: pane.clone() });
        news_of(&mut watcher, subscription, &pane, |e| matches!(e, Event::PaneEnded { .. }));
    }
    host.stop();
}

/// A program that animates its title (a spinner, a progress count) sets
/// it many times a second: a watcher is told the title at most four
/// times a second, and always the last one set.
#[test]
fn an_animated_title_is_told_a_few_times_a_second_and_its_last_frame_always() {
    const FRAMES: u32 = 120;
    let host = TestHost::start();
    let mut watcher = host.connect(Encoding::Json);
    let (subscription, _) = watch(&mut watcher);
    let mut client = host.connect(Encoding::Json);
    let pane = client.start(start_params("shell", &[])).id;
    client.ok(Request::Ask { pane: pane.clone(), text: "true".into(), timeout_ms: None });
    let started = std::time::Instant::now();
    // A frame every 10 ms at most (each `sleep` is a process of its own).
    client.type_line(
        &pane,
        &format!(
            r"for i in $(seq {FRAMES}); do printf '\033]2;frame-%s\007' $i; sleep 0.01; done; printf '\033]2;last-frame\007'"
        ),
    );
    let mut told = Vec::new();
    while told.last().map(String::as_str) != Some("last-frame") {
        let (_, title) = next_change(&mut watcher, subscription, &pane);
        told.push(title);
    }
    let seconds = started.elapsed().as_secs_f64();
    // Four a second, the first at once, and one for the moment between a
    // wait's end and the next frame: the bound for this run's length.
    let most = (seconds * 4.0).ceil() as usize + 2;
    assert!(told.len() <= most, "{} titles told in {seconds:.1} s (at most {most}): {told:?}", told.len());
    assert!(told.len() < FRAMES as usize / 2, "{} of {FRAMES} frames told: {told:?}", told.len());
    assert!(told.windows(2).all(|pair| pair[0] != pair[1]), "a title told twice in a row: {told:?}");
    client.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_watch_begins_with_every_pane_and_each_watcher_sees_the_same_news() {
    let host = TestHost::start();
    let mut client = host.connect(Encoding::Bincode);
    let labelled = StartParams {
        labels: [("team".to_owned(), "ops".to_owned())].into_iter().collect(),
        ..start_params("shell", &[])
    };
    let first = client.start(labelled).id;
    let second = client.start(start_params("shell", &["sleep", "100"])).id;

    let mut one = host.connect(Encoding::Json);
    let mut two = host.connect(Encoding::Bincode);
    let (sub_one, listed) = watch(&mut one);
    let (sub_two, _) = watch(&mut two);
    let ids: Vec<PaneId> = listed.iter().map(|pane| pane.id.clone()).collect();
    assert_eq!(ids, [first.clone(), second.clone()]);
    assert_eq!(listed[0].labels.get("team").map(String::as_str), Some("ops"));

    // Two subscriptions on one connection: each gets every event.
    let (sub_three, _) = watch(&mut one);
    assert_ne!(sub_one, sub_three);

    client.ok(Request::Close { pane: second.clone() });
    let news = news_of(&mut two, sub_two, &second, |e| matches!(e, Event::PaneEnded { .. }));
    assert_eq!(told(&news).last().map(String::as_str), Some("ended closed"), "{news:?}");
    // Both subscriptions of `one` are told, each once.
    let mut ended_on = Vec::new();
    while ended_on.len() < 2 {
        let (id, event) = one.next_event();
        if matches!(&event, Event::PaneEnded { pane, reason } if *pane == second && reason == "closed") {
            ended_on.push(id);
        }
    }
    ended_on.sort();
    assert_eq!(ended_on, [sub_one, sub_three]);

    // A pane that left is not in a later watch's list.
    let mut three = host.connect(Encoding::Json);
    let (_, listed) = watch(&mut three);
    assert_eq!(listed.iter().map(|pane| pane.id.clone()).collect::<Vec<_>>(), std::slice::from_ref(&first));
    client.ok(Request::Close { pane: first });
    host.stop();
}

/// The client library's `watch`: the list, then the news; dropping the
/// stream unsubscribes, and the connection goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_library_watches_and_unsubscribes_on_drop() {
    use panehost_client::{Client, ClientOptions};
    let host = TestHost::start();
    let client = Client::connect(&host.socket, &ClientOptions::default()).await.unwrap();
    let (panes, mut news) = client.watch().await.unwrap();
    assert!(panes.is_empty(), "{panes:?}");
    let pane = client.start(start_params("shell", &["sleep", "100"])).await.unwrap().id;
    let first = tokio::time::timeout(WAIT, news.next()).await.expect("news within the wait").expect("an event");
    assert!(matches!(&first, Event::PaneStarted { pane: summary } if summary.id == pane), "{first:?}");
    client.close(&pane).await.unwrap();
    loop {
        let event = tokio::time::timeout(WAIT, news.next()).await.expect("news within the wait").expect("an event");
        if let Event::PaneEnded { pane: ended, reason } = event {
            assert_eq!((ended, reason.as_str()), (pane.clone(), "closed"));
            break;
        }
    }
    let subscription = news.id();
    drop(news);
    // The drop queued an unsubscribe ahead of this one, on the same
    // connection: this one finds the subscription gone.
    match client.request(Request::Unsubscribe { subscription }).await {
        Err(panehost_client::ClientError::Host(error)) => assert_eq!(error.code, "UNKNOWN_SUBSCRIPTION"),
        other => panic!("{other:?}"),
    }
    host.stop();
}

/// A running pane that is closed is told exited, then ended: every time
/// (the close waits for the exit, and the exit is told before it can be
/// seen).
#[test]
fn a_closed_running_pane_is_told_exited_before_ended_every_time() {
    let host = TestHost::start();
    let mut watcher = host.connect(Encoding::Json);
    let (subscription, _) = watch(&mut watcher);
    let mut client = host.connect(Encoding::Bincode);
    for round in 0..40 {
        let pane = client.start(start_params("shell", &["sleep", "100"])).id;
        client.ok(Request::Close { pane: pane.clone() });
        let news = news_of(&mut watcher, subscription, &pane, |e| matches!(e, Event::PaneEnded { .. }));
        let told = told(&news);
        let exited = told.iter().position(|line| line.starts_with("exited"));
        assert!(exited.is_some(), "round {round}: {told:?}");
        assert_eq!(told.last().map(String::as_str), Some("ended closed"), "round {round}: {told:?}");
    }
    host.stop();
}

/// `panehost watch`: the panes, then a line for each piece of news, as
/// the protocol's JSON with --json.
#[test]
fn panehost_watch_prints_the_panes_then_their_news() {
    use std::io::{BufRead, BufReader};
    use support::command::Cli;
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let first = cli.ok(&["start", "shell", "--", "sleep", "100"]).trim().to_owned();
    for json in [false, true] {
        let mut args = vec!["watch"];
        if json {
            args.push("--json");
        }
        let mut watcher = cli.command(&args).stdout(std::process::Stdio::piped()).spawn().unwrap();
        // Lines arrive on a thread, so that each wait has a bound.
        let (sender, lines) = std::sync::mpsc::channel();
        let stdout = watcher.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        let next = || lines.recv_timeout(WAIT).expect("a line from watch within the wait");
        let listed = next();
        if json {
            let value: serde_json::Value = serde_json::from_str(&listed).unwrap();
            assert_eq!(value["panes"][0]["id"], first.as_str(), "{listed}");
        } else {
            assert!(listed.starts_with(&format!("{first} shell running")), "{listed}");
        }
        let pane = cli.ok(&["start", "shell", "--", "sleep", "100"]).trim().to_owned();
        cli.ok(&["close", &pane]);
        let mut seen = Vec::new();
        loop {
            let line = next();
            let done = if json {
                let value: serde_json::Value = serde_json::from_str(&line).unwrap();
                value["event"]["pane_ended"]["pane"] == pane.as_str()
            } else {
                line == format!("{pane} ended: closed")
            };
            seen.push(line);
            if done {
                break;
            }
        }
        let started = if json { "\"pane_started\":{\"pane\":{".to_owned() } else { format!("{pane} started shell") };
        assert!(seen.iter().any(|line| line.contains(&started)), "{seen:?}");
        let _ = watcher.kill();
        let _ = watcher.wait();
    }
    cli.ok(&["close", &first]);
    host.stop();
}

/// Whether `event` says the pane's activity is now `value`.
fn activity_is(value: &'static str) -> impl Fn(&Event) -> bool {
    move |event| matches!(event, Event::PaneActivity { activity, .. } if activity == value)
}

/// The pane's activity as `inspect` has it.
fn inspected_activity(conn: &mut Connection, pane: &PaneId) -> String {
    match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) => detail.pane.activity,
        other => panic!("{other:?}"),
    }
}

/// An agent that asks for approval is `awaiting_approval`, one that asks
/// anything else `awaiting_input`, on the watch and in `inspect`; the
/// user's answer clears either.
#[test]
fn a_watcher_tells_an_agent_asking_for_approval_from_one_waiting_for_input() {
    let fake = FakeBin::new();
    fake.agent("claude", ASKING_CLAUDE);
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut watcher = host.connect(Encoding::Bincode);
    let (subscription, _) = watch(&mut watcher);
    let mut client = host.connect(Encoding::Json);
    let pane = client.start(start_params("claude", &[])).id;
    let (_, _) = client.follow_from_start_until(&pane, "claude> ");

    for (prompt, waiting, other) in
        [("approve", "awaiting_approval", "awaiting_input"), ("question", "awaiting_input", "awaiting_approval")]
    {
        client.type_line(&pane, prompt);
        let asked = news_of(&mut watcher, subscription, &pane, activity_is(waiting));
        let asked = told(&asked);
        assert!(!asked.contains(&format!("activity {other}")), "{prompt}: {asked:?}");
        assert_eq!(inspected_activity(&mut client, &pane), waiting, "{prompt}");
        // The answer resumes the turn, which then ends.
        client.type_line(&pane, "yes");
        let answered = news_of(&mut watcher, subscription, &pane, activity_is("idle"));
        let answered = told(&answered);
        assert!(
            answered.iter().all(|line| line == "activity busy" || line == "activity idle"),
            "{prompt}: {answered:?}"
        );
        assert_eq!(inspected_activity(&mut client, &pane), "idle", "{prompt}");
    }
    client.ok(Request::Close { pane });
    host.stop();
}

/// A host killed while an agent waits for approval inside its turn: the
/// next host lists the pane as `awaiting_approval` still (not `busy`, as
/// the turn it opens again would say), and the answer clears it as before.
#[test]
fn a_pane_awaiting_approval_still_does_after_a_host_restart() {
    let fake = FakeBin::new();
    fake.agent("claude", ASKING_CLAUDE);
    let mut host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut client = host.connect(Encoding::Json);
    let pane = client.start(start_params("claude", &[])).id;
    let (subscription, mut seen) = client.follow_from_start_until(&pane, "claude> ");
    client.type_line(&pane, "approve");
    client.follow_until_text(subscription, &mut seen, "answer? ");
    // Killed once the record holds the approval.
    let record = host.state_dir.join("panes").join(format!("{pane}.json"));
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        if saved["activity"] == "awaiting_approval" && saved["open_turn"].is_object() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the approval was never saved: {saved}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(client);
    host.kill_hard();
    host.restart();

    let mut watcher = host.connect(Encoding::Json);
    let (subscription, panes) = watch(&mut watcher);
    let listed = panes.iter().find(|summary| summary.id == pane).expect("the pane is back");
    assert_eq!((listed.restored_by.as_str(), listed.activity.as_str()), ("keeper", "awaiting_approval"));
    let mut client = host.connect(Encoding::Json);
    client.type_line(&pane, "yes");
    let answered = news_of(&mut watcher, subscription, &pane, activity_is("idle"));
    let answered = told(&answered);
    assert!(answered.iter().all(|line| line == "activity busy" || line == "activity idle"), "{answered:?}");
    client.ok(Request::Close { pane });
    host.stop();
}
