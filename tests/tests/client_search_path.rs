//! The host sees the machine as the user does now: a CLI installed after
//! the host started, in a directory on the client's PATH but not on the
//! host's, is found by the next `runtimes` and `start`, and a runtime that
//! is not found says where the host looked.

mod support;

use serde_json::Value;
use support::command::{run_to_end, Cli};
use support::*;

fn runtimes_seen_with_path(cli: &Cli, path: &str) -> Vec<Value> {
    let mut command = cli.command(&["runtimes", "--json"]);
    command.env("PATH", path);
    let outcome = run_to_end(command, None);
    assert!(outcome.status.success(), "{outcome:?}");
    let answer: Value = serde_json::from_str(outcome.stdout.trim_end()).unwrap();
    answer["runtimes"].as_array().unwrap().clone()
}

fn claude(runtimes: &[Value]) -> Value {
    runtimes.iter().find(|runtime| runtime["id"] == "claude").expect("claude is listed").clone()
}

#[test]
fn a_cli_installed_after_the_host_started_is_found_on_the_clients_path() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let host_path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display());
    let before = claude(&runtimes_seen_with_path(&cli, &host_path));
    if before["available"] == true {
        eprintln!("skipped: claude is installed on the host's own PATH here ({})", before["path"]);
        host.stop();
        return;
    }
    // A directory the host's PATH lacks, on the client's; empty for now.
    let installed = FakeBin::new();
    let client_path = format!("{}:{host_path}", installed.dir.path().display());
    let missing = claude(&runtimes_seen_with_path(&cli, &client_path));
    assert_eq!(missing["available"], false, "{missing}");
    let reason = missing["unavailable_reason"].as_str().unwrap();
    assert!(reason.contains(&installed.dir.path().display().to_string()), "says where it looked: {reason}");
    assert!(reason.contains("/usr/bin"), "the host's own directories too: {reason}");

    // Installed now (a stand-in answering --version at the adapter's floor).
    let floor = missing["version_floor"].as_str().unwrap_or("1.0.0").to_owned();
    installed.script(
        "claude",
        &format!("case \"$1\" in --version) echo '{floor} (Claude Code)'; exit 0;; esac\nexec sleep 60"),
    );
    let found = claude(&runtimes_seen_with_path(&cli, &client_path));
    assert_eq!(found["available"], true, "{found}");
    assert_eq!(found["path"].as_str().unwrap(), installed.dir.path().join("claude").display().to_string(), "{found}");

    // `start` finds it too, without a host restart.
    let mut command = cli.command(&["start", "claude", "--json"]);
    command.env("PATH", &client_path);
    let started = run_to_end(command, None);
    assert!(started.status.success(), "{started:?}\nhost log:\n{}", host.log());
    let pane: Value = serde_json::from_str(started.stdout.trim_end()).unwrap();
    let id = pane["id"].as_str().or_else(|| pane["started"]["id"].as_str()).expect("the pane's id").to_owned();
    cli.ok(&["close", &id]);

    // A client whose PATH lacks the directory does not see it.
    assert_eq!(claude(&runtimes_seen_with_path(&cli, &host_path))["available"], false);
    host.stop();
}
