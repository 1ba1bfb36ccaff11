//! `panehost runtimes [--wide|--json] [--all]` and `panehost runtimes --probe ID`

use super::context::Context;
use super::output::{print_json, print_line, print_text};
use super::{json, table};
use panehost_ipc::{Receipt, Response, RuntimeInfo};

/// Arguments of `runtimes`.
#[derive(Debug, clap::Args)]
pub(crate) struct RuntimesArgs {
    /// Take a completion receipt of this runtime (its one-shot mode, in the
    /// read-only boundary, asked for one JSON object), store it, and print
    /// it; exits 1 when the receipt did not pass.
    #[arg(long, value_name = "ID")]
    probe: Option<String>,
    /// With --probe: the model to ask.
    #[arg(long, value_name = "MODEL", requires = "probe")]
    model: Option<String>,
    /// With --probe: run without the read-only boundary when the runtime
    /// cannot enforce it.
    #[arg(long, requires = "probe")]
    accept_weaker_boundary: bool,
    /// Print the host's `runtimes` answer, `{"runtimes": [...]}`, or with
    /// --probe its `receipt` answer, in the protocol's JSON
    /// (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
    /// Every column (support, sign-in, version floor, profiles,
    /// limitations), however wide the table gets.
    #[arg(long, conflicts_with = "json")]
    wide: bool,
    /// List the runtimes this repository's tests use too.
    #[arg(long)]
    all: bool,
}

/// Runtimes that exist for this repository's tests (the fixture agent,
/// found when its binary is on PATH): listed only with `--all`.
const TEST_RUNTIMES: &[&str] = &["fixture"];

/// The width the default table keeps within.
const TABLE_WIDTH: usize = 100;

/// Lists the runtimes as a table or a JSON array, or takes a receipt.
pub(crate) async fn run(context: &Context, args: RuntimesArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    if let Some(runtime) = &args.probe {
        let receipt = client.probe_runtime(runtime, args.model.as_deref(), args.accept_weaker_boundary).await?;
        if args.json {
            print_json(&json::answer(Response::Receipt(receipt.clone())))?;
        } else {
            print_line(&describe_receipt(&receipt))?;
        }
        if !receipt.passed {
            anyhow::bail!("the completion receipt of {runtime} did not pass");
        }
        return Ok(());
    }
    let mut runtimes = client.runtimes().await?;
    if !args.all {
        runtimes.retain(|runtime| !TEST_RUNTIMES.contains(&runtime.id.as_str()));
    }
    if args.json {
        print_json(&json::answer(Response::Runtimes { runtimes }))?;
    } else if !args.wide {
        let headers = ["ID", "AVAILABLE", "READINESS", "VERSION", "DETAIL"];
        let rows: Vec<Vec<String>> = runtimes.iter().map(narrow_row).collect();
        print_text(&fit(table::render(&headers, &rows), TABLE_WIDTH))?;
    } else {
        let rows: Vec<Vec<String>> = runtimes.iter().map(row).collect();
        let headers = [
            "ID",
            "SUPPORTED",
            "AVAILABLE",
            "READINESS",
            "SIGN-IN",
            "VERSION",
            "FLOOR",
            "RESUME",
            "PROFILES",
            "LIMITATIONS",
            "DETAIL",
        ];
        print_text(&table::render(&headers, &rows))?;
    }
    Ok(())
}

fn describe_receipt(receipt: &Receipt) -> String {
    let verdict = if receipt.passed { "passed" } else { "failed" };
    let boundary = if receipt.read_only_enforced { "read-only boundary" } else { "weaker boundary (accepted)" };
    format!(
        "{} receipt {verdict} in {} ms ({boundary}); {} {} sha256 {}: {}",
        receipt.runtime,
        receipt.elapsed_ms,
        receipt.path,
        receipt.version.as_deref().unwrap_or("(version unknown)"),
        receipt.sha256.get(..12).unwrap_or(&receipt.sha256),
        receipt.detail
    )
}

/// The columns that fit a terminal: the rest is in `--wide` and `--json`.
fn narrow_row(runtime: &RuntimeInfo) -> Vec<String> {
    let full = row(runtime);
    vec![full[0].clone(), full[2].clone(), full[3].clone(), full[5].clone(), full[10].clone()]
}

/// Cuts every line of `table` to `width` characters, marking a cut with
/// `…`.
fn fit(table: String, width: usize) -> String {
    table
        .lines()
        .map(|line| {
            if line.chars().count() <= width {
                line.to_owned()
            } else {
                let kept: String = line.chars().take(width - 1).collect();
                format!("{kept}…")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn row(runtime: &RuntimeInfo) -> Vec<String> {
    let yes_no = |flag: bool| if flag { "yes" } else { "no" }.to_owned();
    let detail = match (&runtime.readiness_reason, &runtime.unavailable_reason, &runtime.path) {
        (Some(reason), _, _) | (None, Some(reason), _) => reason.clone(),
        (None, None, Some(path)) => path.clone(),
        (None, None, None) => String::new(),
    };
    let readiness = match &runtime.readiness_gate {
        Some(gate) => format!("{} ({gate})", runtime.readiness),
        None => runtime.readiness.clone(),
    };
    let list = |items: &[String]| if items.is_empty() { "-".to_owned() } else { items.join(",") };
    // The profile a start without one gets is marked `*`.
    let profiles: Vec<String> = runtime
        .permission_profiles
        .iter()
        .map(|profile| match &runtime.default_permission_profile {
            Some(default) if default == profile => format!("{profile}*"),
            _ => profile.clone(),
        })
        .collect();
    vec![
        runtime.id.clone(),
        yes_no(runtime.supported),
        yes_no(runtime.available),
        readiness,
        runtime.sign_in.clone(),
        match (&runtime.version, &runtime.version_refused) {
            (Some(version), Some(_)) => format!("{version} (refused)"),
            (Some(version), None) => version.clone(),
            (None, _) => "-".to_owned(),
        },
        match (&runtime.version_floor, &runtime.floor_status) {
            (Some(floor), Some(status)) => format!("{floor} ({status})"),
            (Some(floor), None) => floor.clone(),
            (None, _) => "-".to_owned(),
        },
        list(&runtime.resume_modes),
        list(&profiles),
        list(&runtime.limitations),
        detail,
    ]
}

#[cfg(test)]
mod tests {
    use super::fit;

    #[test]
    fn the_default_table_keeps_within_its_width() {
        let table = format!("ID  DETAIL\nshell  {}\n", "x".repeat(300));
        let fitted = fit(table, 100);
        assert!(fitted.lines().all(|line| line.chars().count() <= 100), "{fitted}");
        assert!(fitted.lines().nth(1).unwrap().ends_with('…'));
        assert_eq!(fit("a\nb\n".to_owned(), 100), "a\nb\n");
    }
}
