//! docs/ADAPTERS.md carries a table of every descriptor; this test keeps it
//! in step with the code. Run with `PANEHOST_WRITE_DOCS=1` to rewrite the
//! table after changing a descriptor.

use panehost_adapters::descriptor::{Evidence, LoginForm, ResumeMode};
use panehost_adapters::runtimes;
use std::path::PathBuf;

const START: &str =
    "<!-- descriptor table: generated from the code, kept in step by adapters/tests/adapters_doc.rs -->";
const END: &str = "<!-- end of descriptor table -->";

fn table() -> String {
    let mut rows = vec![
        "| id | name | executable | resume modes | profiles | limitations | completion | login | evidence | floor |"
            .to_owned(),
        "|---|---|---|---|---|---|---|---|---|---|".to_owned(),
    ];
    for descriptor in runtimes::built_in() {
        let executable = match &descriptor.executable {
            panehost_adapters::descriptor::Executable::Named { names, .. } => names.join(", "),
            panehost_adapters::descriptor::Executable::FromVariable { variable, fallback } => {
                format!("${variable} or {fallback}")
            }
        };
        let modes: Vec<String> = ResumeMode::ALL
            .iter()
            .filter_map(|mode| {
                descriptor.resume_form(*mode).map(|form| format!("{} `{}`", mode.as_str(), form.args.join(" ")))
            })
            .collect();
        let profiles: Vec<String> = descriptor
            .permission_profiles
            .iter()
            .map(|(profile, form)| {
                let mut added = form.args.clone();
                added.extend(form.environment.iter().map(|(name, value)| format!("{name}={value}")));
                format!("{} `{}`", profile.as_str(), added.join(" "))
            })
            .collect();
        let login = match &descriptor.login {
            LoginForm::InTerminal { args } if args.is_empty() => "in terminal (first screen)".to_owned(),
            LoginForm::InTerminal { args } => format!("in terminal `{}`", args.join(" ")),
            LoginForm::OutsideTerminal => "outside terminal".to_owned(),
            LoginForm::NotRequired => "not required".to_owned(),
        };
        let evidence = match &descriptor.evidence {
            Evidence::CapturedHelp { file } => format!("help, `evidence/{file}`"),
            other => other.kind().replace('_', " "),
        };
        let dash = |text: String| if text.is_empty() { "-".to_owned() } else { text };
        rows.push(format!(
            "| `{}` | {} | `{}` | {} | {} | {} | {} | {} | {} | {} |",
            descriptor.id,
            descriptor.display_name,
            executable,
            dash(modes.join("<br>")),
            dash(profiles.join("<br>")),
            dash(descriptor.limitations.join("<br>")),
            descriptor.completion.as_str(),
            login,
            evidence,
            descriptor.version.floor.clone().unwrap_or_else(|| "-".to_owned()),
        ));
    }
    rows.join("\n")
}

#[test]
fn the_descriptor_table_matches_the_code() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/ADAPTERS.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let start = doc.find(START).expect("the table's start marker") + START.len();
    let end = doc.find(END).expect("the table's end marker");
    let expected = format!("\n{}\n", table());
    if doc[start..end] != expected {
        if std::env::var_os("PANEHOST_WRITE_DOCS").is_some() {
            std::fs::write(&path, format!("{}{}{}", &doc[..start], expected, &doc[end..])).unwrap();
            return;
        }
        panic!("docs/ADAPTERS.md's table is out of date; rerun with PANEHOST_WRITE_DOCS=1. Expected:\n{expected}");
    }
}
