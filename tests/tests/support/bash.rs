//! A host whose panes' shell is bash (with the host's prompt marks), and
//! asking it.

use super::{Connection, TestHost};
use panehost_ipc::{PaneId, Request, Response, TurnReport};

/// A host whose shell is bash, with `ready> ` for a prompt.
pub fn bash_host() -> TestHost {
    let host = TestHost::start_with_env(&[("SHELL", "/bin/bash")]);
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\n").unwrap();
    host
}

/// The answer to an `ask` of `text`, which must be `answered`.
pub fn ask(conn: &mut Connection, pane: &PaneId, text: &str) -> TurnReport {
    match conn.ok(Request::Ask { pane: pane.clone(), text: text.into(), timeout_ms: Some(20_000) }) {
        Response::Answered(report) => report,
        other => panic!("{other:?}"),
    }
}
