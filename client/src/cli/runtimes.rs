//! `panehost runtimes [--wide|--json] [--all]` and `panehost runtimes --probe ID`

use super::context::Context;
use super::output::{print_json, print_line, print_text};
use super::{json, printable, table, terminal_width, text_wrap};
use panehost_ipc::runtime::{readiness, readiness_gate};
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

/// Lists the runtimes as a table or a JSON array, or takes a receipt.
/// Without `--all`, the runtimes `test_runtimes` names (those that exist
/// for this repository's tests, such as the fixture agent found when its
/// binary is on PATH) are left out.
pub(crate) async fn run(
    context: &Context,
    args: RuntimesArgs,
    test_runtimes: fn() -> Vec<String>,
) -> anyhow::Result<()> {
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
        let test_runtimes = test_runtimes();
        runtimes.retain(|runtime| !test_runtimes.contains(&runtime.id));
    }
    if args.json {
        print_json(&json::answer(Response::Runtimes { runtimes }))?;
    } else if !args.wide {
        print_text(&narrow_table(&runtimes, terminal_width::columns()))?;
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

/// The table that fits a terminal `width` wide: a runtime's id, readiness
/// and version on its line, and what stops it (or where it is) on the
/// lines below, wrapped. The rest is in `--wide` and `--json`.
fn narrow_table(runtimes: &[RuntimeInfo], width: usize) -> String {
    let words: Vec<String> = runtimes.iter().map(readiness_words).collect();
    let column = |cells: &mut dyn Iterator<Item = usize>, header: &str| cells.max().unwrap_or(0).max(header.len());
    let id_width = column(&mut runtimes.iter().map(|runtime| printable::line(&runtime.id).chars().count()), "ID");
    let words_width = column(&mut words.iter().map(|words| words.chars().count()), "READINESS");
    // The version takes what the other columns leave (a long one is cut).
    let version_width = width.saturating_sub(id_width + words_width + 4).max(MIN_VERSION_CHARS);
    let rows: Vec<Vec<String>> = runtimes
        .iter()
        .zip(words)
        .map(|(runtime, words)| vec![runtime.id.clone(), words, shortened(version(runtime), version_width)])
        .collect();
    let table = table::render(&["ID", "READINESS", "VERSION"], &rows);
    let mut lines = table.lines();
    let mut out = String::new();
    if let Some(header) = lines.next() {
        out.push_str(header);
        out.push('\n');
    }
    let detail_width = width.saturating_sub(DETAIL_INDENT.len());
    for (line, runtime) in lines.zip(runtimes) {
        out.push_str(line);
        out.push('\n');
        // Where the host looked is the same for every runtime not
        // installed: said once, below the table.
        if is_not_installed(runtime) {
            continue;
        }
        for detail in text_wrap::wrap(&printable::line(&detail(runtime)), detail_width) {
            out.push_str(DETAIL_INDENT);
            out.push_str(&detail);
            out.push('\n');
        }
    }
    let not_installed: Vec<&RuntimeInfo> = runtimes.iter().filter(|runtime| is_not_installed(runtime)).collect();
    if let Some(first) = not_installed.first() {
        let note = format!(
            "{} not installed; where the host looked, for {}: {} (--wide: for each)",
            not_installed.len(),
            first.id,
            detail(first)
        );
        out.push('\n');
        for line in text_wrap::wrap(&printable::line(&note), width) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Not found at all (rather than found and not identified).
fn is_not_installed(runtime: &RuntimeInfo) -> bool {
    runtime.readiness == readiness::NOT_READY
        && runtime.readiness_gate.as_deref() == Some(readiness_gate::INSTALLED)
        && runtime.path.is_none()
}

/// Where a runtime's detail lines start.
const DETAIL_INDENT: &str = "    ";

/// The fewest characters of a version the narrow table shows, however
/// narrow the terminal.
const MIN_VERSION_CHARS: usize = 12;

/// `text`, cut to `most` characters with `…` marking the cut.
fn shortened(text: String, most: usize) -> String {
    if text.chars().count() <= most {
        return text;
    }
    let kept: String = text.chars().take(most.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// What a runtime's readiness means, in words: `ready`, or `not ready:`
/// and what stops it (`not installed`, `signed out`, ...). The wire's
/// `not_ready` with the gate `installed` names the gate that failed, which
/// read as "installed"; the table says what failed instead.
fn readiness_words(runtime: &RuntimeInfo) -> String {
    match (runtime.readiness.as_str(), runtime.readiness_gate.as_deref()) {
        (readiness::READY, _) => "ready".to_owned(),
        (readiness::REDUCED, _) => "ready, reduced (version unread)".to_owned(),
        (readiness::NOT_READY, Some(gate)) => {
            let stopped_by = match gate {
                readiness_gate::SUPPORTED => "unsupported",
                readiness_gate::INSTALLED if runtime.path.is_some() => "not identified",
                readiness_gate::INSTALLED => "not installed",
                readiness_gate::VERSION if runtime.version_refused.is_some() => "version refused",
                readiness_gate::VERSION => "version below floor",
                readiness_gate::SIGN_IN => "signed out",
                readiness_gate::RECEIPT => "no receipt (--probe)",
                other => return format!("not ready: gate {other}"),
            };
            format!("not ready: {stopped_by}")
        }
        (readiness::NOT_READY, None) => "not ready".to_owned(),
        (other, Some(gate)) => format!("{other} (gate {gate})"),
        (other, None) => other.to_owned(),
    }
}

/// The version found; marked when the adapter refuses it.
fn version(runtime: &RuntimeInfo) -> String {
    match (&runtime.version, &runtime.version_refused) {
        (Some(version), Some(_)) => format!("{version} (refused)"),
        (Some(version), None) => version.clone(),
        (None, _) => "-".to_owned(),
    }
}

/// Why the runtime is not ready or not available, else where it is.
fn detail(runtime: &RuntimeInfo) -> String {
    match (&runtime.readiness_reason, &runtime.unavailable_reason, &runtime.path) {
        (Some(reason), _, _) | (None, Some(reason), _) => reason.clone(),
        (None, None, Some(path)) => path.clone(),
        (None, None, None) => String::new(),
    }
}

fn row(runtime: &RuntimeInfo) -> Vec<String> {
    let yes_no = |flag: bool| if flag { "yes" } else { "no" }.to_owned();
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
        readiness_words(runtime),
        runtime.sign_in.clone(),
        version(runtime),
        match (&runtime.version_floor, &runtime.floor_status) {
            (Some(floor), Some(status)) => format!("{floor} ({status})"),
            (Some(floor), None) => floor.clone(),
            (None, _) => "-".to_owned(),
        },
        list(&runtime.resume_modes),
        list(&profiles),
        list(&runtime.limitations),
        detail(runtime),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(id: &str, readiness: &str, gate: Option<&str>, reason: &str) -> RuntimeInfo {
        let mut info: RuntimeInfo = serde_json::from_value(serde_json::json!({
            "id": id, "display_name": id, "supported": true, "available": false,
            "resume_modes": [], "limitations": [], "readiness": readiness, "sign_in": "not_required",
            "completion": "screen_heuristic", "login": "not_required", "evidence": "operator",
            "permission_profiles": []
        }))
        .unwrap();
        info.readiness_gate = gate.map(str::to_owned);
        info.readiness_reason = Some(reason.to_owned());
        info
    }

    #[test]
    fn the_default_table_keeps_within_its_width_and_wraps_the_detail() {
        let long = format!("none of [\"claude\"] was found on PATH ({}) or at a known path", "/opt/x/bin:".repeat(20));
        let runtimes = [runtime("claude", "not_ready", Some("installed"), &long), runtime("shell", "ready", None, "")];
        let table = narrow_table(&runtimes, 80);
        assert!(table.lines().all(|line| line.chars().count() <= 80), "{table}");
        assert!(table.lines().nth(1).unwrap().contains("not ready: not installed"), "{table}");
        let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words.contains("or at a known path"), "nothing of the detail is cut: {table}");
        assert_eq!(words.matches("was found on PATH").count(), 1, "said once: {table}");
    }

    #[test]
    fn readiness_reads_as_what_it_means() {
        let words = |readiness, gate| readiness_words(&runtime("x", readiness, gate, ""));
        assert_eq!(words("not_ready", Some("installed")), "not ready: not installed");
        assert_eq!(words("not_ready", Some("sign_in")), "not ready: signed out");
        assert_eq!(words("ready", None), "ready");
        assert_eq!(words("not_ready", Some("new_gate")), "not ready: gate new_gate");
    }
}
