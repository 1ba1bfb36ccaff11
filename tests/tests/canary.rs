//! `panehost canary`, end to end: the real binary judges candidates of the
//! `fixture` runtime (the fixture agent, and stand-ins that differ from it
//! in one way each), and staged stand-ins of npm packages, probing them in
//! the canary's sandbox (no network, none of the user's files).
//!
//! Where bubblewrap is missing or the kernel gives no user namespaces,
//! every verdict must be BLOCKED; these tests check exactly that there
//! instead of skipping.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::command::{run_to_end_within, Outcome};
use support::*;

/// The canary probes for up to a minute per command; a run of these
/// candidates takes well under a second each.
const CANARY_WAIT: Duration = Duration::from_secs(120);

/// The JSON report a `--json` run printed.
fn report_of(outcome: &Outcome) -> Value {
    serde_json::from_str(outcome.stdout.trim_end())
        .unwrap_or_else(|error| panic!("no JSON report ({error}): {outcome:?}"))
}

/// A state directory, a home and a cache of their own for each test.
struct CanaryDirs {
    dir: tempfile::TempDir,
}

impl CanaryDirs {
    fn new() -> CanaryDirs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        CanaryDirs { dir }
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// `panehost --state-dir D canary ARGS...` in an environment built from
    /// scratch. `wrapper` runs first when given (`sh -c SCRIPT sh`).
    fn command(&self, wrapper: Option<&str>, args: &[&str]) -> Command {
        let mut command = match wrapper {
            Some(script) => {
                let mut command = Command::new("/bin/sh");
                command.args(["-c", script, "sh"]).arg(panehost_bin());
                command
            }
            None => Command::new(panehost_bin()),
        };
        command
            .arg("--state-dir")
            .arg(self.state_dir())
            .arg("canary")
            .args(args)
            .env_clear()
            .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display()))
            .env("HOME", self.dir.path().join("home"))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env("LANG", "C.UTF-8");
        command
    }

    fn run(&self, args: &[&str]) -> Outcome {
        run_to_end_within(self.command(None, args), None, CANARY_WAIT)
    }

    /// The report files written under the state directory.
    fn report_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.state_dir().join("canary")) {
            Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// Whether bubblewrap is installed and this kernel lets it make the
/// canary's sandbox (private user, pid, mount and network namespaces, a new
/// `/proc`): what the canary needs to stage and probe a candidate.
fn sandbox_available() -> bool {
    let Some(bwrap) = ["/usr/bin/bwrap", "/usr/local/bin/bwrap"].into_iter().find(|path| Path::new(path).exists())
    else {
        return false;
    };
    let mut command = Command::new(bwrap);
    command.args(["--unshare-user", "--unshare-pid", "--unshare-net", "--ro-bind", "/", "/", "--proc", "/proc"]);
    command.args(["--", "/bin/true"]);
    run_to_end_within(command, None, support::WAIT).code() == Some(0)
}

/// The `case "$1"` arms of a stand-in for the fixture agent that prints
/// this `--version` line and this `--help` text.
fn version_and_help(version: &str, help: &str) -> String {
    format!("  --version) echo '{version}' ;;\n  --help) printf '%s\\n' '{help}' ;;")
}

/// A stand-in for the fixture agent: a script of these `case "$1"` arms.
fn stand_in(bin: &FakeBin, arms: &str) -> PathBuf {
    bin.script("candidate", &format!("case \"$1\" in\n{arms}\n  *) exit 2 ;;\nesac"));
    bin.dir.path().join("candidate")
}

/// Judges a stand-in of these arms and expects `code`; returns the report,
/// or `None` where the kernel gives no user namespaces (after checking that
/// the verdict there is BLOCKED).
fn judge_stand_in(arms: &str, code: i32) -> Option<Value> {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let outcome = judge(&dirs, &stand_in(&bin, arms));
    if !sandbox_available() {
        expect_blocked_here(&outcome);
        return None;
    }
    assert_eq!(outcome.code(), Some(code), "{outcome:?}");
    Some(report_of(&outcome))
}

fn binary_args(path: &Path) -> Vec<String> {
    ["--runtime", "fixture", "--binary", &path.display().to_string(), "--json"].map(str::to_owned).to_vec()
}

fn judge(dirs: &CanaryDirs, path: &Path) -> Outcome {
    let args = binary_args(path);
    dirs.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

fn findings(report: &Value, kind: &str) -> Vec<String> {
    report["findings"][kind].as_array().unwrap().iter().map(|item| item.as_str().unwrap().to_owned()).collect()
}

fn expect_blocked_here(outcome: &Outcome) {
    assert_eq!(outcome.code(), Some(5), "{outcome:?}");
    assert_eq!(report_of(outcome)["verdict"], "BLOCKED");
}

#[test]
fn the_fixture_agent_passes_and_its_report_is_kept() {
    let dirs = CanaryDirs::new();
    let outcome = judge(&dirs, &bin_dir().join("panehost-fixture-agent"));
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "PASS", "{report:#}");
    assert_eq!(report["runtime"], "fixture");
    assert_eq!(report["version"]["floor_status"], "at_or_above");
    assert!(report["network"].as_str().unwrap().starts_with("private network namespace"));
    assert!(report["promotion"].as_str().unwrap().starts_with("not performed"));
    assert_eq!(report["candidate"]["sha256"].as_str().unwrap().len(), 64);
    let probes: Vec<&Value> = report["probes"].as_array().unwrap().iter().collect();
    assert_eq!(
        probes.iter().map(|probe| probe["args"][0].as_str().unwrap()).collect::<Vec<_>>(),
        ["--version", "--help"]
    );
    assert!(probes.iter().all(|probe| probe["exit"] == "exit status: 0"), "{probes:?}");
    let files = dirs.report_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(name.starts_with("fixture-1.0.0-") && name.ends_with("Z.json"), "{name}");
    let kept: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(kept, report);
}

#[test]
fn a_candidate_whose_help_lacks_a_relied_on_flag_fails_naming_it() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let candidate = stand_in(&bin, &version_and_help("panehost-fixture-agent 1.4.0", "usage: candidate [--resume ID]"));
    let outcome = judge(&dirs, &candidate);
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(4), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(report["requirements"]["missing"], serde_json::json!(["`--continue` (flag)"]));
    assert_eq!(findings(&report, "failures"), ["`--continue` (flag) is not in the help"]);
    // The summary for people names it too.
    let summary = dirs.run(&binary_args(&candidate).iter().map(String::as_str).take(4).collect::<Vec<_>>());
    assert!(summary.stdout.contains("FAIL") && summary.stdout.contains("`--continue`"), "{summary:?}");
}

#[test]
fn a_candidate_below_the_floor_fails() {
    let arms = version_and_help("panehost-fixture-agent 0.9.3", "usage: candidate [--resume ID] [--continue]");
    let Some(report) = judge_stand_in(&arms, 4) else { return };
    assert_eq!(report["version"]["floor_status"], "below");
    assert_eq!(findings(&report, "failures"), ["version panehost-fixture-agent 0.9.3 is below the floor 1.0.0"]);
}

#[test]
fn a_version_that_cannot_be_read_passes_with_it_unverified() {
    let arms = version_and_help("fixture nightly", "usage: candidate [--resume ID] [--continue]");
    let Some(report) = judge_stand_in(&arms, 3) else { return };
    assert_eq!(report["verdict"], "PASS_WITH_UNVERIFIED");
    assert_eq!(report["version"]["floor_status"], "indeterminate");
    assert!(findings(&report, "unverified")[0].contains("indeterminate"), "{report:#}");
}

#[test]
fn a_candidate_sees_no_network_interface_but_loopback() {
    // Its version line says how many network interfaces it sees besides loopback.
    let interfaces = "$(grep -c -v -e '^ *lo:' -e '|' /proc/net/dev)";
    let arms = format!(
        "  --version) echo \"panehost-fixture-agent 1.0.{interfaces}\" ;;\n  --help) echo 'usage: [--resume ID] [--continue]' ;;"
    );
    let Some(report) = judge_stand_in(&arms, 0) else { return };
    assert_eq!(report["version"]["printed"], "panehost-fixture-agent 1.0.0", "{report:#}");
}

/// `command` run inside `unshare UNSHARE_ARGS --`, with its environment.
fn run_unshared(unshare_args: &[&str], command: &Command) -> Outcome {
    let program = command.get_program().to_owned();
    let wrapped: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
    let mut unshared = Command::new("unshare");
    unshared.args(unshare_args).arg("--").arg(program).args(wrapped);
    unshared.env_clear().envs(command.get_envs().filter_map(|(name, value)| Some((name, value?))));
    run_to_end_within(unshared, None, CANARY_WAIT)
}

#[test]
fn without_user_namespaces_the_verdict_is_blocked_and_nothing_runs() {
    // A user namespace whose limit on further user namespaces is zero: the
    // kernel refuses the sandbox's namespaces, as on a host that disables
    // them.
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let marker = dirs.dir.path().join("ran");
    bin.script("candidate", &format!("touch '{}'; echo panehost-fixture-agent 1.0.0", marker.display()));
    let script = "echo 0 > /proc/sys/user/max_user_namespaces || exit 97; exec \"$@\"";
    let args = binary_args(&bin.dir.path().join("candidate"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if !sandbox_available() {
        // The refusal is the host's own: the plain run shows it.
        return expect_blocked_here(&dirs.run(&args));
    }
    let outcome = run_unshared(&["--user", "--map-current-user"], &dirs.command(Some(script), &args));
    assert_ne!(outcome.code(), Some(97), "cannot lower the namespace limit here: {outcome:?}");
    assert_eq!(outcome.code(), Some(5), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "BLOCKED");
    let blocked = findings(&report, "blocked");
    assert!(blocked[0].starts_with("no sandbox: bwrap: "), "{blocked:?}");
    assert!(report["network"].as_str().unwrap().starts_with("none:"), "{report:#}");
    assert!(report["isolation"]["sandbox"].as_str().unwrap().starts_with("none:"), "{report:#}");
    assert!(!marker.exists(), "the candidate ran without the sandbox");
}

#[test]
fn without_bubblewrap_nothing_of_the_candidate_runs_not_even_its_install() {
    // bwrap hidden behind /dev/null in a mount namespace of the test's own.
    let script = "for bwrap in /usr/bin/bwrap /usr/local/bin/bwrap; do \
        [ ! -e $bwrap ] || mount --bind /dev/null $bwrap || exit 97; done; exec \"$@\"";
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let marker = dirs.dir.path().join("ran");
    let touch = format!("touch '{}'", marker.display());
    bin.script(
        "npm",
        &FAKE_NPM.replace("prefix=\"$3\"", &format!("{touch}; prefix=\"$3\"")).replace("REBUILD", &touch),
    );
    bin.script("candidate", &format!("{touch}; echo panehost-fixture-agent 1.0.0"));
    let staged = ["--runtime", "grok", "--version", "9.9.9", "--json"];
    let binary = binary_args(&bin.dir.path().join("candidate"));
    if !sandbox_available() {
        return expect_blocked_here(&dirs.run(&binary.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    for args in [staged.to_vec(), binary.iter().map(String::as_str).collect()] {
        let mut command = dirs.command(Some(script), &args);
        command.env("PATH", format!("{}:/usr/bin:/bin", bin.dir.path().display()));
        let outcome = run_unshared(&["--user", "--map-current-user", "--mount"], &command);
        assert_ne!(outcome.code(), Some(97), "cannot hide bwrap here: {outcome:?}");
        assert_eq!(outcome.code(), Some(5), "{args:?}: {outcome:?}");
        let report = report_of(&outcome);
        let blocked = findings(&report, "blocked");
        assert!(
            blocked[0].starts_with("no sandbox: ") && blocked[0].contains("bubblewrap is not installed"),
            "{blocked:?}"
        );
        assert!(report["isolation"]["sandbox"].as_str().unwrap().starts_with("none:"), "{report:#}");
        let probes = report["probes"].as_array().unwrap();
        assert!(probes.iter().all(|probe| probe["exit"].as_str().unwrap().starts_with("did not run")), "{probes:?}");
        assert!(!marker.exists(), "{args:?}: the candidate ran without the sandbox");
    }
}

#[test]
fn what_cannot_be_judged_is_refused_with_a_reason() {
    let dirs = CanaryDirs::new();
    let outcome = dirs.run(&["--runtime", "no-such-runtime", "--binary", "/bin/true"]);
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("unknown runtime"), "{outcome:?}");
    let outcome = dirs.run(&["--runtime", "fixture", "--version", "1.0.0"]);
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("not published as an npm package"), "{outcome:?}");
    let outcome = dirs.run(&["--runtime", "claude", "--version", "--registry=http://example.invalid"]);
    assert_eq!(outcome.code(), Some(2), "a value that looks like an option is a usage error: {outcome:?}");
    let outcome = dirs.run(&["--runtime", "claude", "--version=1.0 ; rm -rf x"]);
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains("is not a version"), "{outcome:?}");
    let outcome = dirs.run(&["--runtime", "fixture"]);
    assert_eq!(outcome.code(), Some(2), "{outcome:?}");
    let outcome = dirs.run(&["--all-installed", "--runtime", "fixture"]);
    assert_eq!(outcome.code(), Some(2), "{outcome:?}");
    assert!(dirs.report_files().is_empty());
}

#[test]
fn a_missing_binary_fails_without_a_probe() {
    let dirs = CanaryDirs::new();
    let outcome = judge(&dirs, &dirs.dir.path().join("nothing-here"));
    assert_eq!(outcome.code(), Some(4), "{outcome:?}");
    let report = report_of(&outcome);
    assert!(findings(&report, "failures")[0].ends_with("is not an executable file"), "{report:#}");
    assert!(report["probes"].as_array().unwrap().is_empty());
}

/// A stand-in for npm: `view` publishes 9.9.9 of every package; `install`
/// (only with `--ignore-scripts`) puts a grok 9.9.9 in the prefix;
/// `rebuild` runs REBUILD (see [`OFFLINE_REBUILD`]).
const FAKE_NPM: &str = r#"case "$1" in
  view) echo 9.9.9 ;;
  install)
    case " $* " in *" --ignore-scripts "*) ;; *) echo "scripts were not ignored" >&2; exit 9 ;; esac
    prefix="$3"
    mkdir -p "$prefix/node_modules/.bin" "$prefix/node_modules/@vibe-kit/grok-cli"
    echo '{"version": "9.9.9"}' > "$prefix/node_modules/@vibe-kit/grok-cli/package.json"
    printf '#!/bin/sh\ncase "$1" in --version) echo 9.9.9 ;; --help) echo "Usage: grok [options]"; echo "  -m, --model <model>" ;; esac\n' > "$prefix/node_modules/.bin/grok"
    chmod +x "$prefix/node_modules/.bin/grok" ;;
  rebuild) REBUILD ;;
  *) exit 2 ;;
esac"#;

/// An install-script step that fails when it sees any network interface
/// but loopback.
const OFFLINE_REBUILD: &str =
    r#"[ "$(grep -c -v -e '^ *lo:' -e '|' /proc/net/dev)" = 0 ] || { echo "the network is reachable" >&2; exit 1; }"#;

#[test]
fn all_installed_judges_only_what_the_registry_publishes_anew() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    bin.script("npm", &FAKE_NPM.replace("REBUILD", OFFLINE_REBUILD));
    // grok 1.0.1 is installed and 9.9.9 is published; qwen is up to date.
    bin.script("grok", "echo 1.0.1");
    bin.script("qwen", "echo 9.9.9");
    let mut command = dirs.command(None, &["--all-installed", "--json"]);
    command.env("PATH", format!("{}:/usr/bin:/bin", bin.dir.path().display()));
    let outcome = run_to_end_within(command, None, CANARY_WAIT);
    let entries = report_of(&outcome);
    let decisions: Vec<(&str, &str)> = entries
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| (entry["runtime"].as_str().unwrap(), entry["decision"].as_str().unwrap()))
        .collect();
    assert_eq!(decisions, [("qwen", "up_to_date"), ("grok", "judged")], "{outcome:?}");
    let grok = &entries[1];
    assert_eq!(grok["installed"], "1.0.1");
    assert_eq!(grok["published"], "9.9.9");
    let report = &grok["report"];
    assert_eq!(report["candidate"]["package"], "@vibe-kit/grok-cli");
    assert_eq!(report["candidate"]["package_version"], "9.9.9");
    assert_eq!(report["candidate"]["staged_removed"], true);
    let staged_in = PathBuf::from(report["candidate"]["staged_in"].as_str().unwrap());
    assert!(staged_in.starts_with(dirs.dir.path().join("cache/panehost/canary")), "{staged_in:?}");
    assert!(!staged_in.exists(), "the scratch prefix is removed");
    assert_eq!(dirs.report_files().len(), 1);
    if !sandbox_available() {
        // The offline install scripts cannot run: staging is blocked.
        assert_eq!(outcome.code(), Some(5), "{outcome:?}");
        return assert_eq!(report["verdict"], "BLOCKED");
    }
    assert_eq!(report["verdict"], "PASS", "{report:#}");
    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
}

#[test]
fn an_install_script_that_needs_the_network_blocks_the_run() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let needs_network = "echo 'getaddrinfo EAI_AGAIN registry.example' >&2; exit 1";
    bin.script("npm", &FAKE_NPM.replace("REBUILD", needs_network));
    let mut command = dirs.command(None, &["--runtime", "grok", "--version", "9.9.9", "--json"]);
    command.env("PATH", format!("{}:/usr/bin:/bin", bin.dir.path().display()));
    let outcome = run_to_end_within(command, None, CANARY_WAIT);
    assert_eq!(outcome.code(), Some(5), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "BLOCKED");
    let blocked = findings(&report, "blocked");
    assert!(blocked[0].starts_with("staging failed: npm rebuild") && blocked[0].contains("EAI_AGAIN"), "{blocked:?}");
    assert!(report["probes"].as_array().unwrap().is_empty(), "nothing of the candidate ran");
}

/// A stand-in for npm whose grok names a native part per platform as an
/// optional dependency, `grok-native` (published for every machine), and
/// whose install leaves it out the first FIRST_MISSING times, as npm does
/// with one it could not fetch. Like codex, the staged grok fails
/// without its native part.
const FAKE_NPM_LEAVING_OUT: &str = r#"case "$1" in
  view) case " $* " in *" os cpu libc "*) echo '{}' ;; *) echo 9.9.9 ;; esac ;;
  install)
    prefix="$3"
    echo x >> "$prefix/installs"
    mkdir -p "$prefix/node_modules/.bin" "$prefix/node_modules/@vibe-kit/grok-cli"
    echo '{"version": "9.9.9", "optionalDependencies": {"grok-native": "npm:@vibe-kit/grok-cli@9.9.9-native"}}' \
      > "$prefix/node_modules/@vibe-kit/grok-cli/package.json"
    if [ "$(wc -l < "$prefix/installs")" -gt FIRST_MISSING ]; then
      mkdir -p "$prefix/node_modules/grok-native"; echo '{}' > "$prefix/node_modules/grok-native/package.json"
    fi
    printf '#!/bin/sh\ncase "$1" in --version) [ -f "$(dirname "$0")/../grok-native/package.json" ] || { echo "Missing optional dependency grok-native" >&2; exit 1; }; echo 9.9.9 ;; --help) echo "Usage: grok [options]"; echo "  -m, --model <model>" ;; esac\n' > "$prefix/node_modules/.bin/grok"
    chmod +x "$prefix/node_modules/.bin/grok" ;;
  rebuild) ;;
  *) exit 2 ;;
esac"#;

fn judge_grok_with(npm: &str) -> (Outcome, Value) {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    bin.script("npm", npm);
    let mut command = dirs.command(None, &["--runtime", "grok", "--version", "9.9.9", "--json"]);
    command.env("PATH", format!("{}:/usr/bin:/bin", bin.dir.path().display()));
    let outcome = run_to_end_within(command, None, CANARY_WAIT);
    let report = report_of(&outcome);
    (outcome, report)
}

#[test]
fn an_optional_dependency_npm_left_out_is_fetched_again_or_blocks_the_run() {
    if !sandbox_available() {
        return; // staging runs in the sandbox; without it every verdict is BLOCKED
    }
    // Left out once: the second install fetches it, and the candidate is judged.
    let (outcome, report) = judge_grok_with(&FAKE_NPM_LEAVING_OUT.replace("FIRST_MISSING", "1"));
    assert_eq!(report["verdict"], "PASS", "{report:#}");
    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
    // Left out every time: nothing is judged, and the finding names it.
    let (outcome, report) = judge_grok_with(&FAKE_NPM_LEAVING_OUT.replace("FIRST_MISSING", "9"));
    assert_eq!(outcome.code(), Some(5), "{outcome:?}");
    assert_eq!(report["verdict"], "BLOCKED");
    let blocked = findings(&report, "blocked");
    assert!(blocked[0].starts_with("staging failed: npm install left out grok-native"), "{blocked:?}");
    assert!(blocked[0].contains("(@vibe-kit/grok-cli@9.9.9-native)"), "{blocked:?}");
    assert!(report["probes"].as_array().unwrap().is_empty(), "nothing of the candidate ran");
}

/// What a candidate that goes after the user's files does at each step
/// (`$1` names the step): it reads a secret in the home by its absolute
/// path and prints it, and plants a file in the home and in the state
/// directory; what it could not do, it says.
fn attempt_function(secret: &Path, home: &Path, state_dir: &Path) -> String {
    format!(
        r#"attempt() {{
  cat '{secret}' 2>/dev/null || echo "$1 could not read the secret"
  {{ echo planted > '{home}/planted-by-'"$1"; }} 2>/dev/null || echo "$1 could not write in the home"
  {{ echo planted > '{state}/planted-by-'"$1"; }} 2>/dev/null || echo "$1 could not write in the state directory"
}}"#,
        secret = secret.display(),
        home = home.display(),
        state = state_dir.display()
    )
}

/// A stand-in for npm whose every step makes the attempt: `install` (npm
/// itself, with the network), `rebuild` (the package's install script,
/// offline) and the staged `grok` (its `--version` and `--help`). What the
/// install steps saw is kept in the prefix, and `grok --help` prints it
/// first, as a package would smuggle a secret into the report.
fn prying_npm(attempt: &str) -> String {
    format!(
        r#"{attempt}
case "$1" in
  install)
    prefix="$3"
    mkdir -p "$prefix/node_modules/.bin" "$prefix/node_modules/@vibe-kit/grok-cli"
    echo '{{"version": "9.9.9"}}' > "$prefix/node_modules/@vibe-kit/grok-cli/package.json"
    attempt install > "$prefix/seen-by-install"
    cat > "$prefix/node_modules/.bin/grok" <<'GROK'
#!/bin/sh
{attempt}
prefix="$(dirname "$0")/../.."
case "$1" in
  --version) attempt probe; echo 9.9.9 ;;
  --help) cat "$prefix/seen-by-install" "$prefix/seen-by-script"; attempt help; echo "Usage: grok [options]"; echo "  -m, --model <model>" ;;
esac
GROK
    chmod +x "$prefix/node_modules/.bin/grok" ;;
  rebuild) attempt script > "$3/seen-by-script" ;;
  *) exit 2 ;;
esac"#
    )
}

/// Every file under `dir`, by its path relative to `dir`, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn a_candidate_can_neither_read_nor_write_the_users_files() {
    const SECRET: &str = "sk-canary-secret-4e1b9c07";
    let dirs = CanaryDirs::new();
    let home = dirs.dir.path().join("home");
    let secret = home.join("secret-token");
    std::fs::write(&secret, SECRET).unwrap();
    std::fs::create_dir_all(dirs.state_dir()).unwrap();
    let bin = FakeBin::new();
    bin.script("npm", &prying_npm(&attempt_function(&secret, &home, &dirs.state_dir())));
    let mut command = dirs.command(None, &["--runtime", "grok", "--version", "9.9.9", "--json"]);
    command.env("PATH", format!("{}:/usr/bin:/bin", bin.dir.path().display()));
    let outcome = run_to_end_within(command, None, CANARY_WAIT);

    // Whatever the verdict: the secret is nowhere in what the canary
    // printed or kept, and nothing was planted.
    let kept: Vec<String> = dirs.report_files().iter().map(|file| std::fs::read_to_string(file).unwrap()).collect();
    assert_eq!(kept.len(), 1, "{outcome:?}");
    for text in [&outcome.stdout, &outcome.stderr, &kept[0]] {
        assert!(!text.contains(SECRET), "the candidate read the secret in the home: {text}");
    }
    assert_eq!(files_under(&home), ["secret-token"], "the candidate wrote in the home");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), SECRET);
    let state = files_under(&dirs.state_dir());
    assert!(
        state.iter().all(|file| file.starts_with("canary/")),
        "the candidate wrote in the state directory: {state:?}"
    );
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }

    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "PASS", "{report:#}");
    // What it could not do, in its own words: the first line of each probe.
    let first_lines: Vec<&str> =
        report["probes"].as_array().unwrap().iter().map(|probe| probe["first_line"].as_str().unwrap()).collect();
    assert_eq!(first_lines, ["probe could not read the secret", "install could not read the secret"], "{report:#}");
    // And in the report's: the home and the state directory were hidden.
    let isolation = &report["isolation"];
    assert!(isolation["sandbox"].as_str().unwrap_or("").starts_with("bubblewrap"), "{report:#}");
    let hidden: Vec<&str> =
        isolation["hidden"].as_array().map(|dirs| dirs.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert!(hidden.contains(&home.to_str().unwrap()), "{report:#}");
    assert!(hidden.contains(&dirs.state_dir().to_str().unwrap()), "{report:#}");
}

#[test]
fn a_candidate_that_crashes_on_help_fails() {
    let arms = "  --version) echo panehost-fixture-agent 1.2.0 ;;\n  --help) kill -SEGV $$ ;;";
    let Some(report) = judge_stand_in(arms, 4) else { return };
    let failures = findings(&report, "failures");
    assert_eq!(failures[0], "`--help` crashed: signal: 11", "{failures:?}");
    // With no help, every requirement is missing too.
    assert_eq!(failures.len(), 3, "{failures:?}");
}

#[test]
fn a_retirement_notice_in_place_of_the_help_fails_and_is_quoted() {
    // As kimi-cli 1.52.0 answers: its version still reads, its help is a
    // notice (and starting it runs another program's installer).
    let notice = "kimi-cli is no longer maintained. Running the install script...";
    let Some(report) = judge_stand_in(&version_and_help("panehost-fixture-agent 1.5.0", notice), 4) else { return };
    let failures = findings(&report, "failures");
    assert!(
        failures.iter().any(|failure| failure.starts_with("`--help` shows no usage") && failure.contains(notice)),
        "{failures:?}"
    );
}

// ---------------------------------------------------------------------------
// The behaviour stage (`--live`): its plumbing, with a stand-in for the live
// proof. The live proof itself, and its comparison, are run for real by CI
// (`.ci/run`) and unit-tested in tests/src/bin/panehost-live/comparison.rs.
// ---------------------------------------------------------------------------

/// A stand-in for `panehost-live` that writes this comparison (with
/// `RUNTIME` and `BIN_DIR` replaced by what it was given) to the file its
/// `--comparison` names, and records its arguments and what it could see
/// beside it.
fn live_proof_stand_in(bin: &FakeBin, comparison: &str) -> PathBuf {
    let script = format!(
        r#"runtime= bin_dir= out= records=
while [ $# -gt 0 ]; do
  case "$1" in
    --runtime) runtime=$2; shift ;;
    --candidate-bin-dir) bin_dir=$2; shift ;;
    --comparison) out=$2; shift ;;
    --records) records=$2; shift ;;
  esac
  shift
done
echo "[live] stand-in for $runtime from $bin_dir" >&2
if [ -r "$HOME_SECRET" ]; then echo "[live] saw the secret" >&2; fi
mkdir -p "$records"
printf '%s
' '{comparison}' | sed -e "s|RUNTIME|$runtime|" -e "s|BIN_DIR|$bin_dir|" > "$out""#
    );
    bin.script("panehost-live", &script);
    bin.dir.path().join("panehost-live")
}

/// Pinned records with one (any) record of the fixture runtime.
fn pinned_records(dirs: &CanaryDirs) -> PathBuf {
    let records = dirs.dir.path().join("pinned-records");
    std::fs::create_dir_all(&records).unwrap();
    std::fs::write(records.join("fixture.json"), "{}").unwrap();
    records
}

fn judge_live(dirs: &CanaryDirs, candidate: &Path, live_proof: &Path, records: &Path) -> Outcome {
    let mut args = binary_args(candidate);
    args.extend(["--live".to_owned(), "--live-proof".to_owned(), live_proof.display().to_string()]);
    args.extend(["--pinned-records".to_owned(), records.display().to_string()]);
    dirs.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn a_step_that_passed_for_the_pinned_version_and_fails_now_fails_the_candidate_naming_it() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let live = live_proof_stand_in(
        &bin,
        r#"{"runtime":"RUNTIME","pinned_version":"1.0.0","candidate_version":"1.4.0","verdict":"FAIL","steps":[
            {"name":"start","result":"pass","pinned_result":"pass","changed":false,"detail":"started from BIN_DIR"},
            {"name":"send","result":"fail","pinned_result":"pass","changed":true,"detail":"PONG never showed; the screen ends: > PING"},
            {"name":"resume_latest","result":"pass","pinned_result":"not_applicable","changed":false,"detail":"new"}]}"#,
    );
    let candidate = bin_dir().join("panehost-fixture-agent");
    let outcome = judge_live(&dirs, &candidate, &live, &pinned_records(&dirs));
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(4), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "FAIL", "{report:#}");
    assert_eq!(
        findings(&report, "failures"),
        ["behaviour: `send` passed for the pinned 1.0.0 and is `fail` for the candidate: PONG never showed; the screen ends: > PING"]
    );
    let steps = report["steps"].as_array().unwrap();
    let names: Vec<&str> = steps.iter().map(|step| step["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["start", "send", "resume_latest"]);
    assert_eq!(steps[1]["pinned_result"], "pass");
    // The live proof was given the candidate's own directory.
    let start_detail = steps[0]["detail"].as_str().unwrap();
    assert_eq!(start_detail, format!("started from {}", bin_dir().display()));
    let behaviour = &report["behaviour"];
    assert_eq!(behaviour["comparison"], "FAIL");
    assert_eq!(behaviour["exit"], "exit status: 0");
    assert!(
        behaviour["output_tail"]
            .as_array()
            .unwrap()
            .iter()
            .any(|line| line.as_str().unwrap().contains("stand-in for fixture")),
        "{behaviour:#}"
    );
}

#[test]
fn every_pinned_pass_passing_again_keeps_the_help_verdict() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let live = live_proof_stand_in(
        &bin,
        r#"{"runtime":"RUNTIME","pinned_version":"1.0.0","candidate_version":"1.4.0","verdict":"PASS","steps":[
            {"name":"start","result":"pass","pinned_result":"pass","changed":false,"detail":"settled"}]}"#,
    );
    let outcome = judge_live(&dirs, &bin_dir().join("panehost-fixture-agent"), &live, &pinned_records(&dirs));
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(report["verdict"], "PASS", "{report:#}");
    assert_eq!(report["behaviour"]["comparison"], "PASS");
    assert_eq!(report["steps"][0]["name"], "start");
}

#[test]
fn a_live_proof_that_writes_no_comparison_blocks_the_verdict() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    bin.script("panehost-live", "echo '[live] cannot start the fixture' >&2; exit 1");
    let live = bin.dir.path().join("panehost-live");
    let outcome = judge_live(&dirs, &bin_dir().join("panehost-fixture-agent"), &live, &pinned_records(&dirs));
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(5), "{outcome:?}");
    let report = report_of(&outcome);
    assert_eq!(
        findings(&report, "blocked"),
        ["the live proof ended (exit status: 1) without comparing the steps: [live] cannot start the fixture"]
    );
}

#[test]
fn without_a_pinned_record_the_behaviour_is_left_unverified() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    let live = live_proof_stand_in(&bin, "{}");
    let empty = dirs.dir.path().join("no-records");
    std::fs::create_dir_all(&empty).unwrap();
    let outcome = judge_live(&dirs, &bin_dir().join("panehost-fixture-agent"), &live, &empty);
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(3), "{outcome:?}");
    let report = report_of(&outcome);
    let unverified = findings(&report, "unverified");
    assert!(
        unverified[0].starts_with("behaviour not judged: no live record of the pinned version of fixture"),
        "{unverified:?}"
    );
}

#[test]
fn live_without_its_live_proof_is_refused_with_where_it_looked() {
    let dirs = CanaryDirs::new();
    let missing = dirs.dir.path().join("nowhere/panehost-live");
    let mut args = binary_args(&bin_dir().join("panehost-fixture-agent"));
    args.extend(["--live".to_owned(), "--live-proof".to_owned(), missing.display().to_string()]);
    let outcome = dirs.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains(&missing.display().to_string()), "{outcome:?}");
    assert!(outcome.stderr.contains("cargo build -p panehost-tests"), "{outcome:?}");
}

#[test]
fn a_version_the_adapter_refuses_fails_with_its_reason() {
    let dirs = CanaryDirs::new();
    let bin = FakeBin::new();
    // kimi from 1.52.0 is refused: a retirement release that runs a remote
    // installer when started.
    let help = "usage: kimi [--session ID] [--model NAME] [--work-dir DIR] [--yolo] [login]";
    let candidate = stand_in(&bin, &version_and_help("kimi, version 1.52.0", help));
    let args = ["--runtime", "kimi", "--binary", candidate.to_str().unwrap(), "--json"];
    let outcome = dirs.run(&args);
    if !sandbox_available() {
        return expect_blocked_here(&outcome);
    }
    assert_eq!(outcome.code(), Some(4), "{outcome:?}");
    let report = report_of(&outcome);
    let failures = findings(&report, "failures");
    assert!(
        failures.iter().any(|failure| failure
            .starts_with("version kimi, version 1.52.0 is one the adapter refuses (from 1.52.0)")
            && failure.contains("retired")),
        "{failures:?}"
    );
}
