//! README's "A short tour", run as written: the test reads the tour's code
//! block from README.md and runs its commands in order against a host of
//! its own, once as root (the test's user) and once as an unprivileged
//! user, so a README that shows something that does not work fails here.
//!
//! The commands get their host through the environment (`PANEHOST_SOCKET`,
//! `PANEHOST_STATE_DIR`), not through arguments, so their argv is exactly
//! the README's, with the pane id the first `start` printed in place of the
//! example id. The first command starts the host, as it does for a
//! newcomer.

mod ssh_fixture;
mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;
use support::command::{find_pane, run_to_end, wait_for, ChildGuard, Outcome};
use support::{bin_dir, panehost_bin, WAIT};

/// The pane id the README's examples use.
const EXAMPLE_ID: &str = "p3fa9c01b";

/// Set to make the unprivileged run fail, rather than skip, where the
/// test cannot create its user.
const REQUIRE_SECOND_USER: &str = "PANEHOST_REQUIRE_SECOND_USER";

/// One line of the tour: the command as written and its comment, with
/// the comment lines that continue it.
#[derive(Debug)]
struct Step {
    line: String,
    argv: Vec<String>,
    comment: String,
}

/// The commands of the code block under "## A short tour".
fn tour() -> Vec<Step> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let section = readme.split("\n## A short tour\n").nth(1).expect("README has a section \"A short tour\"");
    let block = section.split("```sh\n").nth(1).expect("the tour has a ```sh block");
    let block = block.split("\n```").next().unwrap();
    let mut steps: Vec<Step> = Vec::new();
    for line in block.lines() {
        let (command, comment) = split_comment(line);
        if command.trim().is_empty() {
            // A comment of its own continues the step above when indented
            // under its comment; a heading comment stands alone.
            if let (Some(step), true) = (steps.last_mut(), line.starts_with(' ')) {
                step.comment.push(' ');
                step.comment.push_str(comment.trim());
            }
            continue;
        }
        let argv = shell_words::split(command)
            .unwrap_or_else(|error| panic!("the tour's line {line:?} is no command: {error}"));
        steps.push(Step { line: line.to_owned(), argv, comment: comment.trim().to_owned() });
    }
    assert!(steps.len() >= 10, "the tour has too few commands: {steps:?}");
    steps
}

/// Splits a line at its first `#` that is outside quotes and starts a word.
fn split_comment(line: &str) -> (&str, &str) {
    let mut quote = None;
    let mut previous = ' ';
    for (index, character) in line.char_indices() {
        match (quote, character) {
            (None, '\'' | '"') => quote = Some(character),
            (Some(open), _) if open == character => quote = None,
            (None, '#') if previous.is_whitespace() => return (&line[..index], &line[index + 1..]),
            _ => {}
        }
        previous = character;
    }
    (line, "")
}

/// Who runs the tour: a uid and gid to switch to (none: the test's own
/// user), and the directory that holds its socket, state and home.
struct Runner {
    ids: Option<(u32, u32)>,
    dir: tempfile::TempDir,
    program: PathBuf,
}

impl Runner {
    fn new(ids: Option<(u32, u32)>) -> Runner {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut program = panehost_bin();
        if let Some((uid, gid)) = ids {
            // The user's own directory, and a copy of panehost it can run
            // (the build's directory need not be open to it).
            let bin = dir.path().join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            let copy = bin.join("panehost");
            std::fs::copy(&program, &copy).unwrap();
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            std::os::unix::fs::chown(&home, Some(uid), Some(gid)).unwrap();
            let state = dir.path().join("state");
            let run = dir.path().join("run");
            for private in [&state, &run] {
                std::fs::create_dir_all(private).unwrap();
                std::fs::set_permissions(private, std::fs::Permissions::from_mode(0o700)).unwrap();
                std::os::unix::fs::chown(private, Some(uid), Some(gid)).unwrap();
            }
            program = copy;
        }
        Runner { ids, dir, program }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// `panehost ARGS...` as this user, its host found through the
    /// environment.
    fn command(&self, args: &[String]) -> Command {
        let mut command = Command::new(&self.program);
        // The user's copy of panehost first, then the build's programs.
        let mut dirs = vec![self.program.parent().unwrap().to_path_buf(), bin_dir()];
        dirs.dedup();
        dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
        let path = std::env::join_paths(dirs).unwrap();
        command
            .args(args)
            .current_dir(self.home())
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home())
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8")
            .env("PANEHOST_SOCKET", self.dir.path().join("run").join("host.sock"))
            .env("PANEHOST_STATE_DIR", self.dir.path().join("state"));
        if let Some((uid, gid)) = self.ids {
            command.uid(uid).gid(gid);
        }
        command
    }

    fn run(&self, args: &[String]) -> Outcome {
        run_to_end(self.command(args), None)
    }

    /// Runs a command that streams until it is ended: waits for its first
    /// line of output, then ends it (by its pid) and returns that line.
    fn first_line(&self, args: &[String]) -> String {
        let mut command = self.command(args);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut guard = ChildGuard(Some(command.spawn().unwrap()));
        let stdout = guard.child().stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let line = receiver.recv_timeout(WAIT).unwrap_or_else(|_| panic!("{args:?} printed no line within {WAIT:?}"));
        drop(guard); // ends it by its pid
        line
    }

    /// Whether `program` is on the commands' PATH.
    fn finds(&self, program: &str) -> bool {
        let command = self.command(&[]);
        let path = command.get_envs().find(|(name, _)| *name == "PATH").and_then(|(_, value)| value).unwrap();
        std::env::split_paths(path).any(|dir| dir.join(program).is_file())
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        // Whatever the tour left running ends with the test.
        let _ = run_to_end(self.command(&["stop".into(), "--close-panes".into()]), None);
    }
}

/// What the test does with a line of the tour it does not run as written.
fn skipped(argv: &[String]) -> Option<&'static str> {
    let words: Vec<&str> = argv.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["cargo", "install", ..] => Some("the test runs the panehost it built"),
        ["panehost", "attach", ..] => Some("interactive: it needs a terminal and a person to detach"),
        ["panehost", "login", ..] => Some("interactive: a sign-in in a terminal"),
        ["panehost", "web", "--install-assets"] => {
            Some("fetches packages from the npm registry; the test stays offline")
        }
        ["panehost", "canary", ..] => Some("stages the version from the npm registry; the test stays offline"),
        ["panehost", "web"] => Some("serves until it is ended, and needs the assets --install-assets fetches"),
        _ => None,
    }
}

/// Runs the tour as `runner`'s user; `who` names it in failures.
fn run_tour(who: &str, runner: &Runner) {
    let mut pane: Option<String> = None;
    let mut ran = 0;
    for step in tour() {
        if let Some(reason) = skipped(&step.argv) {
            eprintln!("{who}: skipped `{}`: {reason}", step.line.trim());
            continue;
        }
        assert_eq!(step.argv[0], "panehost", "{who}: the tour runs panehost: {}", step.line);
        let args: Vec<String> = step.argv[1..]
            .iter()
            .map(|arg| {
                if arg == EXAMPLE_ID {
                    pane.clone().unwrap_or_else(|| panic!("{who}: `{}` comes before a pane was started", step.line))
                } else {
                    arg.clone()
                }
            })
            .collect();
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        let context = format!("{who}: `{}` ({})", step.line.trim(), step.comment);
        ran += 1;
        // Commands that stream until ended: their first line shows they
        // work, then the test ends them.
        if matches!(words.as_slice(), ["events", ..] | ["watch", ..]) {
            let line = runner.first_line(&args);
            if words.contains(&"--json") {
                let value: serde_json::Value = serde_json::from_str(line.trim_end())
                    .unwrap_or_else(|error| panic!("{context}: no JSON object ({error}): {line:?}"));
                assert!(value.is_object(), "{context}: {line:?}");
            }
            if words == ["watch"] {
                assert!(!line.trim().is_empty(), "{context}: {line:?}");
            }
            continue;
        }
        let outcome = runner.run(&args);
        // An agent CLI this machine lacks: the command must refuse and
        // say which program is missing; where it is installed, it must work.
        let agent = ["claude", "codex"].into_iter().find(|agent| words.contains(agent));
        if let Some(agent) = agent.filter(|agent| !runner.finds(agent)) {
            if outcome.status.success() {
                continue;
            }
            assert!(
                // The host's refusal, so the command line itself was valid.
                outcome.stderr.contains(&format!("runtime {agent} is not available")),
                "{context}: no clear refusal without {agent}: {outcome:?}"
            );
            eprintln!("{who}: `{}` refused ({agent} is not installed): {}", step.line.trim(), outcome.stderr.trim());
            continue;
        }
        if words.contains(&"--require-ready") && !outcome.status.success() {
            assert!(outcome.stderr.contains("ready"), "{context}: the refusal names the gate: {outcome:?}");
            continue;
        }
        assert!(outcome.status.success(), "{context} failed: {outcome:?}");
        match words.as_slice() {
            ["start", "shell"] => {
                let id = outcome.stdout.trim().to_owned();
                assert!(
                    id.len() == EXAMPLE_ID.len() && id.starts_with('p'),
                    "{context}: prints a pane id: {outcome:?}"
                );
                if let Some((uid, _)) = runner.ids {
                    // The pane's process is the user's, not root's.
                    let listed = runner.run(&["ls".into(), "--json".into()]);
                    let listed: serde_json::Value = serde_json::from_str(listed.stdout.trim_end()).unwrap();
                    let pid = find_pane(&listed, &id).and_then(|pane| pane["pid"].as_u64()).expect("ls lists the pane");
                    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
                    let owner = status.lines().find_map(|line| line.strip_prefix("Uid:")).unwrap();
                    assert_eq!(owner.split_whitespace().next(), Some(uid.to_string().as_str()), "{context}: {status}");
                }
                pane = Some(id);
            }
            ["start", "shell", "--label", label] => {
                let id = outcome.stdout.trim();
                let found = runner.run(&["ls".into(), "--label".into(), (*label).into()]);
                assert!(
                    found.status.success() && found.stdout.contains(id),
                    "{context}: ls --label finds it: {found:?}"
                );
                assert!(!found.stdout.contains(pane.as_deref().unwrap()), "{context}: only it: {found:?}");
            }
            ["ls"] => assert!(outcome.stdout.contains(pane.as_deref().unwrap()), "{context}: {outcome:?}"),
            ["inspect", _] => {
                // `send` returns once the keys are written; the echo comes
                // a moment later.
                wait_for(&format!("{context} to show hello"), || {
                    let shown = runner.run(&args);
                    if shown.stdout.lines().any(|line| line.trim() == "hello") {
                        Ok(())
                    } else {
                        Err(shown.stdout)
                    }
                });
            }
            ["history", ..] => assert!(outcome.stdout.contains("echo hello"), "{context}: {outcome:?}"),
            ["ask", _, _] => {
                // The pane runs in the host's home; `ls` leaves out dotfiles.
                let names = std::fs::read_dir(runner.home()).unwrap().map(|entry| entry.unwrap().file_name());
                let expected = names.filter(|name| !name.to_string_lossy().starts_with('.')).count().to_string();
                assert!(
                    outcome.stdout.lines().any(|line| line.trim() == expected),
                    "{context}: prints the count ({expected}): {outcome:?}"
                );
            }
            ["resize", _, size] => {
                let listed = runner.run(&["ls".into()]);
                assert!(listed.stdout.contains(size), "{context}: ls shows {size}: {listed:?}");
            }
            ["stop"] => assert!(outcome.stdout.contains("stopped the host"), "{context}: {outcome:?}"),
            ["runtimes"] => assert!(outcome.stdout.contains("shell"), "{context}: {outcome:?}"),
            _ => {}
        }
    }
    assert!(pane.is_some() && ran >= 10, "{who}: the tour started no pane or ran too little ({ran} commands)");
}

#[test]
fn the_readme_tour_works_for_root() {
    run_tour("root", &Runner::new(None));
}

/// The unprivileged user, made as the `--remote` tests make theirs.
fn second_user() -> Option<(u32, u32)> {
    let reason = if rustix::process::geteuid().as_raw() != 0 {
        Some("the test does not run as root, so it cannot make a second user")
    } else if !Path::new("/usr/sbin/useradd").exists() {
        Some("useradd is missing")
    } else {
        None
    };
    if let Some(reason) = reason {
        if std::env::var_os(REQUIRE_SECOND_USER).is_some() {
            panic!("a second user is required ({REQUIRE_SECOND_USER} is set), but {reason}");
        }
        eprintln!("SKIPPED: the_readme_tour_works_for_a_normal_user: {reason}");
        return None;
    }
    let uid = ssh_fixture::second_user();
    let gid = Command::new("id").args(["-g", ssh_fixture::SECOND_USER]).output().unwrap();
    let gid = String::from_utf8_lossy(&gid.stdout).trim().parse().expect("id -g prints a gid");
    Some((uid, gid))
}

#[test]
fn the_readme_tour_works_for_a_normal_user() {
    let Some(ids) = second_user() else { return };
    let started = Instant::now();
    run_tour("a normal user", &Runner::new(Some(ids)));
    eprintln!("the tour took {:?}", started.elapsed());
}
