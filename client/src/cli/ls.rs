//! `panehost ls [--label NAME=VALUE]... [--json]`

use super::context::Context;
use super::output::{print_json, print_text};
use super::{json, pair_arg, table};
use panehost_ipc::{Labels, PaneState, PaneSummary, Response};

/// Arguments of `ls`.
#[derive(Debug, clap::Args)]
pub(crate) struct LsArgs {
    /// Only the panes carrying this label; repeat to require several.
    #[arg(long = "label", value_name = "NAME=VALUE", value_parser = pair_arg::parse_pair)]
    labels: Vec<(String, String)>,
    /// Print the host's `panes` answer, `{"panes": [...]}`, in the
    /// protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Lists the panes as a table or as JSON.
pub(crate) async fn run(context: &Context, args: LsArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let wanted: Labels = args.labels.into_iter().collect();
    let panes = client.list_labelled(&wanted).await?;
    if args.json {
        print_json(&json::answer(Response::Panes { panes }))?;
    } else {
        // Labels get a column when a pane has any.
        let labelled = panes.iter().any(|pane| !pane.labels.is_empty());
        let mut header = vec!["ID", "RUNTIME", "STATE", "PID", "SIZE", "OFFSET", "TITLE"];
        if labelled {
            header.push("LABELS");
        }
        let rows: Vec<Vec<String>> = panes.iter().map(|pane| row(pane, labelled)).collect();
        print_text(&table::render(&header, &rows))?;
    }
    Ok(())
}

fn row(pane: &PaneSummary, labelled: bool) -> Vec<String> {
    let mut row = vec![
        pane.id.to_string(),
        pane.runtime.clone(),
        state(&pane.state),
        pane.pid.to_string(),
        pane.size.to_string(),
        pane.offset.to_string(),
        pane.title.clone(),
    ];
    if labelled {
        row.push(pane.labels.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join(","));
    }
    row
}

/// `running`, or `exited(CODE)`.
pub(crate) fn state(state: &PaneState) -> String {
    match state {
        PaneState::Running => "running".to_owned(),
        PaneState::Exited(status) => format!("exited({})", status.code),
    }
}
