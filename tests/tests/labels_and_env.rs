//! Pane labels (a client's names and values, listed and matched by `list`,
//! kept across a host restart) and a client's environment for `shell`
//! panes (refused for agent runtimes).

mod support;

use panehost_ipc::{Encoding, ErrorCode, Labels, PaneId, PaneSummary, Request, Response, StartParams};
use support::command::*;
use support::*;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

fn list(conn: &mut Connection, wanted: &[(&str, &str)]) -> Vec<PaneSummary> {
    match conn.ok(Request::List { labels: labels(wanted) }) {
        Response::Panes { panes } => panes,
        other => panic!("{other:?}"),
    }
}

fn ids(panes: &[PaneSummary]) -> Vec<PaneId> {
    panes.iter().map(|pane| pane.id.clone()).collect()
}

fn refusal(conn: &mut Connection, params: StartParams) -> String {
    match conn.call(Request::Start(params)) {
        Err(error) => {
            assert_eq!(error.code, ErrorCode::InvalidArgument.as_str(), "{error:?}");
            error.message
        }
        Ok(other) => panic!("started: {other:?}"),
    }
}

#[test]
fn labels_are_listed_matched_and_kept_across_a_restart() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let ada =
        conn.start(StartParams { labels: labels(&[("owner", "ada"), ("task", "42")]), ..start_params("shell", &[]) });
    assert_eq!(ada.labels, labels(&[("owner", "ada"), ("task", "42")]));
    let bob = conn.start(StartParams { labels: labels(&[("owner", "bob")]), ..start_params("shell", &[]) }).id;
    let plain = conn.start(start_params("shell", &[])).id;

    assert_eq!(ids(&list(&mut conn, &[])), [ada.id.clone(), bob.clone(), plain.clone()]);
    assert_eq!(ids(&list(&mut conn, &[("owner", "ada")])), std::slice::from_ref(&ada.id));
    assert_eq!(ids(&list(&mut conn, &[("owner", "ada"), ("task", "42")])), std::slice::from_ref(&ada.id));
    assert_eq!(ids(&list(&mut conn, &[("owner", "ada"), ("task", "7")])), Vec::<PaneId>::new());
    assert_eq!(ids(&list(&mut conn, &[("owner", "carol")])), Vec::<PaneId>::new());

    drop(conn);
    host.kill_hard();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    let after = list(&mut conn, &[("task", "42")]);
    assert_eq!(ids(&after), std::slice::from_ref(&ada.id));
    assert_eq!(after[0].labels, ada.labels);
    for pane in [ada.id, bob, plain] {
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn labels_out_of_bounds_are_refused_saying_why() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let too_many: Labels = (0..=panehost_ipc::labels::MAX_LABELS).map(|n| (format!("l{n}"), String::new())).collect();
    let message = refusal(&mut conn, StartParams { labels: too_many, ..start_params("shell", &[]) });
    assert_eq!(message, "33 labels are too many: at most 32");
    let message =
        refusal(&mut conn, StartParams { labels: labels(&[("has space", "x")]), ..start_params("shell", &[]) });
    assert!(message.starts_with("label name \"has space\" is not 1 to 64 bytes"), "{message}");
    let long = "v".repeat(panehost_ipc::labels::MAX_LABEL_VALUE_LEN + 1);
    let message = refusal(&mut conn, StartParams { labels: labels(&[("owner", &long)]), ..start_params("shell", &[]) });
    assert!(message.contains("longer than 256 bytes"), "{message}");
    assert!(list(&mut conn, &[]).is_empty(), "nothing was started");
    host.stop();
}

#[test]
fn a_shell_pane_gets_the_clients_variables_and_an_agent_runtime_refuses_them() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let env = labels(&[("TASK_ID", "42"), ("GREETING", "hello world")]);
    let command = ["sh", "-c", "echo \"task=$TASK_ID greeting=$GREETING pane=$PANEHOST_PANE\"; sleep 60"];
    let pane = conn.start(StartParams { env: env.clone(), ..start_params("shell", &command) }).id;
    let (_, transcript) = conn.follow_from_start_until(&pane, "pane=p");
    conn.ok(Request::Close { pane: pane.clone() });
    assert!(
        transcript.text().contains(&format!("task=42 greeting=hello world pane={pane}")),
        "{:?}",
        transcript.text()
    );

    let message = refusal(&mut conn, StartParams { env: env.clone(), ..start_params("fixture", &[]) });
    assert_eq!(
        message,
        "runtime fixture builds its environment from scratch and takes none from a client; `env` is for `shell` and \
         runtimes from the configuration file"
    );
    let message = refusal(
        &mut conn,
        StartParams { env: labels(&[("PANEHOST_PANE", "p00000000")]), ..start_params("shell", &[]) },
    );
    assert_eq!(message, "PANEHOST_PANE is set by the host; names starting with PANEHOST_ are its own");
    let message = refusal(&mut conn, StartParams { env: labels(&[("A=B", "x")]), ..start_params("shell", &[]) });
    assert!(message.starts_with("\"A=B\" is not a variable name"), "{message}");
    assert!(list(&mut conn, &[]).is_empty(), "nothing was started");
    host.stop();
}

#[test]
fn the_command_line_sets_labels_and_variables_and_finds_panes_by_label() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let pane = cli.ok(&[
        "start",
        "shell",
        "--label",
        "owner=ada",
        "--env",
        "TASK_ID=42",
        "--",
        "sh",
        "-c",
        "echo task=$TASK_ID; sleep 60",
    ]);
    let pane = pane.trim().to_owned();
    cli.ok(&["start", "shell"]);
    let table = cli.ok(&["ls", "--label", "owner=ada"]);
    assert_eq!(table.lines().count(), 2, "a header and one pane:\n{table}");
    assert!(table.lines().next().unwrap().contains("LABELS"), "{table}");
    assert!(table.contains(&pane) && table.contains("owner=ada"), "{table}");
    let json: serde_json::Value = serde_json::from_str(&cli.ok(&["ls", "--label", "owner=ada", "--json"])).unwrap();
    assert_eq!(json["panes"][0]["labels"]["owner"], "ada", "{json}");
    let mut conn = host.connect(Encoding::Json);
    conn.follow_from_start_until(&PaneId(pane), "task=42");
    let bad = cli.run(&["start", "shell", "--label", "novalue"]);
    assert_eq!(bad.code(), Some(2), "{bad:?}");
    assert!(bad.stderr.contains("expected NAME=VALUE"), "{bad:?}");
    host.stop();
}
