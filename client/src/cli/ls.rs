//! `panehost ls [--json]`

use super::context::Context;
use super::output::{print_line, write_stdout};
use super::{json, table};
use panehost_ipc::{PaneState, PaneSummary};

/// Arguments of `ls`.
#[derive(Debug, clap::Args)]
pub(crate) struct LsArgs {
    /// Print a JSON array of panes.
    #[arg(long)]
    json: bool,
}

/// Lists the panes as a table or a JSON array.
pub(crate) async fn run(context: &Context, args: LsArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let panes = client.list().await?;
    if args.json {
        let array: Vec<_> = panes.iter().map(json::pane).collect();
        print_line(&serde_json::Value::Array(array).to_string())?;
    } else {
        let rows: Vec<Vec<String>> = panes.iter().map(row).collect();
        write_stdout(table::render(&["ID", "RUNTIME", "STATE", "PID", "SIZE", "OFFSET", "TITLE"], &rows).as_bytes())?;
    }
    Ok(())
}

fn row(pane: &PaneSummary) -> Vec<String> {
    vec![
        pane.id.to_string(),
        pane.runtime.clone(),
        state(&pane.state),
        pane.pid.to_string(),
        pane.size.to_string(),
        pane.offset.to_string(),
        pane.title.clone(),
    ]
}

/// `running`, or `exited(CODE)`.
pub(crate) fn state(state: &PaneState) -> String {
    match state {
        PaneState::Running => "running".to_owned(),
        PaneState::Exited(status) => format!("exited({})", status.code),
    }
}
