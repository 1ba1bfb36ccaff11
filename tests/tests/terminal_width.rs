//! What a newcomer reads fits an 80-column terminal: every help text and
//! the `runtimes` table, with `COLUMNS=80` and with no terminal at all.

mod support;

use support::command::{run_to_end, Cli};
use support::*;

const WIDTH: usize = 80;

/// Subcommands left out of the main help (panehost runs them itself).
const HIDDEN: &[&str] = &["host", "notify", "up"];

fn too_long(text: &str) -> Vec<&str> {
    text.lines().filter(|line| line.chars().count() > WIDTH).collect()
}

/// `panehost ARGS`, its standard output, with `COLUMNS` set or not.
fn help(args: &[&str], columns: Option<&str>) -> String {
    let mut command = std::process::Command::new(panehost_bin());
    command.args(args).env_clear().env("PATH", "/usr/bin:/bin");
    if let Some(columns) = columns {
        command.env("COLUMNS", columns);
    }
    let outcome = run_to_end(command, None);
    assert!(outcome.status.success(), "panehost {args:?}: {outcome:?}");
    outcome.stdout
}

/// The subcommands `panehost --help` lists, by name.
fn listed_subcommands(main_help: &str) -> Vec<String> {
    main_help
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn every_help_fits_80_columns_and_keeps_its_options_apart() {
    let main_help = help(&["--help"], Some("80"));
    let subcommands = listed_subcommands(&main_help);
    assert!(subcommands.len() > 15, "{main_help}");
    for hidden in HIDDEN {
        assert!(!subcommands.iter().any(|name| name == hidden), "{hidden} is listed:\n{main_help}");
        assert!(main_help.contains(hidden), "the main help names the internal {hidden}:\n{main_help}");
    }
    let every: Vec<String> = subcommands.iter().cloned().chain(HIDDEN.iter().map(|name| (*name).to_owned())).collect();
    for columns in [Some("80"), None] {
        let main = help(&["--help"], columns);
        assert!(too_long(&main).is_empty(), "COLUMNS={columns:?}: {:?}\n{main}", too_long(&main));
        for name in every.iter().filter(|name| *name != "help") {
            let text = help(&[name, "--help"], columns);
            assert!(too_long(&text).is_empty(), "{name} --help, COLUMNS={columns:?}: {:?}\n{text}", too_long(&text));
            assert!(text.contains("Examples") || text.contains("Exit codes"), "{name} has no example:\n{text}");
            assert!(text.contains("Global options:"), "{name}:\n{text}");
            assert!(text.contains("Remote options"), "{name}:\n{text}");
        }
    }
    // The options of a subcommand stand apart from the global ones.
    let start = help(&["start", "--help"], Some("80"));
    let own = start.split("Global options:").next().unwrap();
    assert!(own.contains("--require-ready") && !own.contains("--socket") && !own.contains("--remote"), "{start}");
    // A wider terminal gets longer lines, not the same ones.
    let wide = help(&["start", "--help"], Some("200"));
    assert!(wide.lines().any(|line| line.chars().count() > WIDTH), "{wide}");
    // The canary's exit codes are in its help.
    let canary = help(&["canary", "--help"], Some("80"));
    for code in ["0  PASS", "3  PASS_WITH_UNVERIFIED", "4  FAIL", "5  BLOCKED"] {
        assert!(canary.contains(code), "{code}:\n{canary}");
    }
}

#[test]
fn the_runtimes_table_fits_80_columns_and_says_what_stops_a_runtime() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    for args in [&["runtimes"][..], &["runtimes", "--all"]] {
        let mut command = cli.command(args);
        command.env("COLUMNS", "80");
        let outcome = run_to_end(command, None);
        assert!(outcome.status.success(), "{outcome:?}");
        let table = outcome.stdout;
        assert!(too_long(&table).is_empty(), "{args:?}: {:?}\n{table}", too_long(&table));
        // Readiness in words: a runtime that is not installed (most are not,
        // on a test machine) reads so, with where the host looked, whole.
        assert!(!table.contains("not_ready"), "{table}");
        assert!(!table.contains('…'), "nothing is cut, the versions neither:\n{table}");
        let words = table.split_whitespace().collect::<Vec<_>>().join(" ");
        if words.contains("not ready: not installed") {
            assert!(words.contains("not installed; where the host looked"), "{table}");
            assert!(words.contains("was found on PATH"), "{table}");
        }
    }
    host.stop();
}
