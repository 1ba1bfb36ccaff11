//! `panehost runtimes [--json]`

use super::context::Context;
use super::output::{print_line, write_stdout};
use super::table;
use panehost_ipc::RuntimeInfo;

/// Arguments of `runtimes`.
#[derive(Debug, clap::Args)]
pub(crate) struct RuntimesArgs {
    /// Print a JSON array of runtimes.
    #[arg(long)]
    json: bool,
}

/// Lists the runtimes as a table or a JSON array.
pub(crate) async fn run(context: &Context, args: RuntimesArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let runtimes = client.runtimes().await?;
    if args.json {
        print_line(&serde_json::to_string(&runtimes)?)?;
    } else {
        let rows: Vec<Vec<String>> = runtimes.iter().map(row).collect();
        let headers = [
            "ID",
            "SUPPORTED",
            "AVAILABLE",
            "READY",
            "VERSION",
            "FLOOR",
            "RESUME",
            "PROFILES",
            "LIMITATIONS",
            "DETAIL",
        ];
        write_stdout(table::render(&headers, &rows).as_bytes())?;
    }
    Ok(())
}

fn row(runtime: &RuntimeInfo) -> Vec<String> {
    let yes_no = |flag: bool| if flag { "yes" } else { "no" }.to_owned();
    let detail = match (&runtime.not_ready_reason, &runtime.unavailable_reason, &runtime.path) {
        (Some(reason), _, _) | (None, Some(reason), _) => reason.clone(),
        (None, None, Some(path)) => path.clone(),
        (None, None, None) => String::new(),
    };
    let list = |items: &[String]| if items.is_empty() { "-".to_owned() } else { items.join(",") };
    vec![
        runtime.id.clone(),
        yes_no(runtime.supported),
        yes_no(runtime.available),
        yes_no(runtime.ready),
        runtime.version.clone().unwrap_or_else(|| "-".to_owned()),
        match (&runtime.version_floor, &runtime.floor_status) {
            (Some(floor), Some(status)) => format!("{floor} ({status})"),
            (Some(floor), None) => floor.clone(),
            (None, _) => "-".to_owned(),
        },
        list(&runtime.resume_modes),
        list(&runtime.permission_profiles),
        list(&runtime.limitations),
        detail,
    ]
}
