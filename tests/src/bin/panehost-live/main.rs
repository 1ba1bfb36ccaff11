//! `panehost-live`: the live proof. The real agent CLIs, offline against
//! the local model endpoint fixture, driven through a real running
//! `panehost host` with the client library, exactly as an API server would;
//! one JSON record per CLI as evidence, and docs/COMPATIBILITY.md generated
//! from the records and the adapters' declarations.
//!
//! # Run it
//!
//! ```sh
//! cargo build -p panehost-host -p panehost-tests && target/debug/panehost-live
//! ```
//!
//! ```text
//! panehost-live [--runtime ID]... [--cache DIR] [--records DIR] [--doc FILE]
//!               [--bin-dir DIR] [--keep] [--doc-only] [--boundaries] [--expect DIR]
//! ```
//!
//! * `--runtime ID`: only this CLI (repeatable): `codex`, `claude`,
//!   `gemini`, `qwen`, `copilot`, `opencode`, `grok`, `hermes`, `kimi`,
//!   `omp`, `pi`, `deepseek`, `droid`, `qoder`, `amp`. Default: all fifteen, in that order. The records of the others are left as they are.
//! * `--cache DIR`: where the pinned CLIs are (one npm prefix per CLI, as
//!   `adapters/evidence/capture.sh` lays them out). Default:
//!   `$PANEHOST_CLI_CACHE`, else `~/.cache/panehost/clis`.
//! * `--records DIR`: where the records go. Default: `tests/live-records`.
//! * `--doc FILE`: the page to generate. Default: `docs/COMPATIBILITY.md`.
//! * `--bin-dir DIR`: where `panehost` and
//!   `panehost-model-endpoint` are. Default: this binary's directory.
//! * `--keep`: keep the scratch directory (HOME, host and fixture logs).
//! * `--doc-only`: rewrite the page from the records; run nothing.
//! * `--boundaries`: instead of the steps below, the permission-profile
//!   proof (`boundary/`): per CLI, the writes each profile must refuse or
//!   allow, in records of their own (`RECORDS/boundaries/<id>.json`); the
//!   page is left as it is.
//!
//! * `--expect DIR`: judge the run against the records in `DIR`
//!   (`regressions.rs`): exit 1 when a step that passed there does not pass
//!   now. `.ci/run` runs codex, claude and qwen this way.
//! * `--candidate-bin-dir DIR`: run the one `--runtime` from `DIR` (a
//!   candidate version the canary staged) instead of installing its pin.
//! * `--comparison FILE`: with `--expect`, write each step of the run beside
//!   the expected record's, with a verdict (`comparison.rs`): the canary's
//!   behaviour stage (docs/CANARY.md) reads it.
//! * `--print-records-dir`: print the default records directory and exit.
//!
//! It needs node and npm (most CLIs are npm packages), the system's
//! Python 3 with its venv module (hermes is a PyPI package) and a Python
//! 3.13 (kimi is a PyPI package that needs it: `$PANEHOST_PYTHON_3_13`,
//! `python3.13` on PATH, or pyenv's `versions/3.13.*`), and no network
//! once the CLIs are in the cache. A run of all fifteen takes about
//! fifteen minutes (the twelve took about thirteen; omp alone took 32 s,
//! pi 25 s and deepseek about 54 s; droid, qoder and amp stop at their
//! vendor's sign-in and take seconds).
//! Progress goes to stderr, a summary to stdout; the exit status is 0 when
//! every record was written, whatever the CLIs did (unless `--expect`
//! finds a regression).
//!
//! # What it does
//!
//! 1. **Install** (`install.rs`): each pinned CLI (`adapters/evidence/<id>.json`)
//!    into `CACHE/<id>` with `npm install --prefix` (a PyPI package: a
//!    virtual environment and its pip), when missing.
//! 2. **Set up** (`profiles.rs`, `endpoint.rs`, `host.rs`): a scratch
//!    directory (mode 0700, beside the cache: `CACHE/../live-PID`) with a
//!    scratch HOME holding each CLI's configuration pointed at the fixture
//!    (docs/LIVE.md); the fixture
//!    (`panehost-model-endpoint --port 0`, port from its first line); a
//!    host (`panehost --socket S --state-dir D host`) with that HOME, PATH =
//!    the CLIs' bin directories + node's + `/usr/bin:/bin`, and the
//!    fixture's variables. A variable reaches a pane only when the
//!    runtime's descriptor lists it in `reads_environment`.
//! 3. **Each runtime**, one after the other (`run.rs`), each step at most
//!    60 s (90 s for those that start a pane of their own), the runtime at
//!    most 5 minutes, one runtime's failure never stopping the next:
//!    `detect` (`runtimes`: version, SHA-256, floor), `start` (reach the
//!    prompt: the screen settles, no dialog), `send` (`PING` → `PONG`),
//!    `completion` (`ask` answers with the hook's or notify program's
//!    source, or is refused with `COMPLETION_UNOBSERVED`), `interrupt`
//!    (during `SLOW`: the fixture sees the client go away, the answer stops
//!    growing, the CLI keeps running), `close` (the pane's process and
//!    process group are gone), `resume_reference` (the session id found in
//!    the CLI's own store, see `sessions.rs`; `PONG` redrawn),
//!    `resume_latest`, `reconnect` (a follower cut off through a proxy
//!    mid-answer hands on exactly the pane's bytes), `receipt` (the
//!    completion receipt, `probe_runtime`, passes and the runtime is then
//!    ready), `restore_reference`
//!    (a reboot for one pane: host, keepers and the CLI killed, and a new
//!    host resumes the session it recorded, redrawing `PONG`), `leftovers` (no
//!    process carrying the scratch HOME outlives the run). Each step is
//!    `pass`, `fail` or `not_applicable` (a declared limitation, which the
//!    host must refuse naming it), with a detail and its duration.
//!    A CLI whose profile names a sign-in wall (`profiles.rs`) and whose
//!    first pane stops at it is `blocked` from `start` on: the steps that
//!    need a prompt or a session are recorded as `blocked` with the
//!    reason and not run; `close`, the refusals of declared limitations,
//!    `receipt` and `leftovers` still run. A profile may name the CLI's
//!    one-shot mode: `one_shot` (`oneshot.rs`) runs it with `PING` beside
//!    the host and records what it printed and what the fixture saw.
//! 4. **Records** (`record.rs`): `RECORDS/<id>.json`, replacing the last;
//!    paths appear as `<home>`, `<cache>`, `<scratch>`, `<repo>`.
//! 5. **The page** (`compatibility.rs`): docs/COMPATIBILITY.md from every
//!    record there and the descriptors of all runtimes.
//!
//! Everything it starts it ends by pid: the host (SIGTERM, then SIGKILL),
//! the fixture, each pane through `close` (and whatever of a pane's process
//! group is left), and at the end any process still carrying the scratch
//! HOME.

mod boundary;
mod close;
mod comparison;
mod compatibility;
mod detect;
mod early;
mod endpoint;
mod host;
mod install;
mod interrupt;
mod oneshot;
mod options;
mod outcome;
mod pane;
mod procs;
mod profiles;
mod receipt;
mod reconnect;
mod record;
mod regressions;
mod restore;
mod resume;
mod run;
mod send;
mod sessions;
mod start;
mod submit;

use endpoint::Endpoint;
use host::Host;
use options::{Options, USAGE};
use outcome::Outcome;
use record::{Record, Sanitizer, StepRecord};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("panehost-live: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("panehost-live: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<(), String> {
    if options.print_records_dir {
        println!("{}", options.records.display());
        return Ok(());
    }
    if !options.doc_only {
        live(options)?;
    }
    if options.boundaries {
        return Ok(());
    }
    write_doc(options)
}

/// Rewrites the page from every record and the descriptors.
fn write_doc(options: &Options) -> Result<(), String> {
    let records = record::read_all(&options.records)?;
    let descriptors = panehost_adapters::runtimes::built_in();
    let page = compatibility::render(&descriptors, &records);
    std::fs::write(&options.doc, page).map_err(|e| format!("cannot write {}: {e}", options.doc.display()))?;
    eprintln!("[live] wrote {} from {} record(s)", options.doc.display(), records.len());
    Ok(())
}

/// The scratch directory, removed at the end unless kept.
struct Scratch {
    dir: PathBuf,
    keep: bool,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("[live] kept the scratch directory {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn live(options: &Options) -> Result<(), String> {
    let descriptors = panehost_adapters::runtimes::built_in();
    let endpoint_bin = options.bin_dir.join("panehost-model-endpoint");
    if !endpoint_bin.is_file() {
        return Err(format!("{} is missing: cargo build -p panehost-host -p panehost-tests", endpoint_bin.display()));
    }

    // 1. The CLIs.
    let mut installs = Vec::new();
    let mut bin_dirs = Vec::new();
    for id in &options.runtimes {
        let started = std::time::Instant::now();
        let (installed, outcome) = match &options.candidate_bin_dir {
            Some(dir) => install::candidate(dir),
            None => install::ensure(&options.repo, &options.cache, id),
        };
        if let Some(installed) = installed {
            bin_dirs.push(installed.bin_dir);
        }
        installs.push(step_record("install", outcome, started));
    }

    // 2. The scratch HOME, the fixture, the host.
    // Beside the cache, not in the temporary directory: Gemini CLI and Qwen
    // Code skip a settings file (the host's hooks) under any directory that
    // others may write to, such as /tmp; and the boundary proof's writes
    // outside the working directory must not land in the temporary
    // directory, which some sandboxes leave writable.
    let base = options.cache.parent().map(Path::to_path_buf).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| e.to_string())?;
    let scratch = Scratch { dir: dir.canonicalize().unwrap_or(dir), keep: options.keep };
    let home = scratch.dir.join("home");
    let work = home.join("work");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let script = scratch.dir.join("script.json");
    if options.boundaries {
        let entries = boundary::cases::script(&options.runtimes, &home, &work);
        std::fs::write(&script, entries.to_string()).map_err(|e| format!("cannot write {}: {e}", script.display()))?;
    }
    let script = options.boundaries.then_some(script.as_path());
    let mut endpoint = Endpoint::start(&endpoint_bin, &scratch.dir.join("endpoint.log"), script)?;
    profiles::write_configs(&home, &work, endpoint.port)
        .map_err(|e| format!("cannot write the CLIs' configuration: {e}"))?;
    let path = host_path(&bin_dirs);
    let host = Host::start(&options.bin_dir, &scratch.dir, &home, &path, &profiles::host_variables(endpoint.port))?;
    eprintln!("[live] fixture on port {} (pid {}), host pid {}", endpoint.port, endpoint.pid(), host.pid());

    let mut sanitizer = Sanitizer::default();
    sanitizer.add(&home, "<home>");
    sanitizer.add(&scratch.dir, "<scratch>");
    sanitizer.add(&options.cache, "<cache>");
    sanitizer.add(&options.repo, "<repo>");
    if let Some(user_home) = std::env::var_os("HOME") {
        sanitizer.add(Path::new(&user_home), "~");
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let mut summary = Vec::new();
    for (id, install) in options.runtimes.iter().zip(installs) {
        eprintln!("[live] {id}");
        let descriptor = descriptors.iter().find(|d| &d.id == id).cloned().ok_or(format!("no descriptor for {id}"))?;
        let profile = profiles::profile(id).ok_or(format!("no profile for {id}"))?;
        let record = runtime.block_on(async {
            let client = match host.connect().await {
                Ok(client) => client,
                Err(error) => {
                    let steps = vec![
                        install,
                        StepRecord {
                            name: "detect".into(),
                            result: record::FAIL.into(),
                            detail: format!("cannot connect to the host: {error}"),
                            ms: 0,
                        },
                    ];
                    return run::record(id, &run::State::default(), "", steps);
                }
            };
            let host_version = client.welcome().host.clone();
            let ctx = run::Ctx {
                client,
                host: &host,
                endpoint: &endpoint,
                descriptor,
                profile,
                home: home.clone(),
                work: work.clone(),
                submissions: Default::default(),
            };
            let (steps, state) =
                if options.boundaries { boundary::run(&ctx, install).await } else { run::run(&ctx, install).await };
            run::record(id, &state, &host_version, steps)
        });
        let record = sanitize(record, &sanitizer);
        let records =
            if options.boundaries { boundary::records_dir(&options.records) } else { options.records.clone() };
        record::write(&records, &record)?;
        summary.push(record);
    }

    // The end: the host (closing any pane), the fixture, and anything else
    // that carries the scratch HOME.
    host.stop();
    endpoint.stop();
    drop(runtime);
    let left = procs::with_home(&home, &[]);
    if !left.is_empty() {
        eprintln!("[live] still running after the host stopped, ended by pid: {}", procs::list(&left));
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?
            .block_on(procs::end(&left));
    }
    print_summary(&summary);
    if let (Some(expected), Some(file)) = (&options.expect, &options.comparison) {
        comparison::write(expected, &summary, file)?;
    }
    if let Some(expected) = &options.expect {
        let regressions = regressions::find(expected, &summary)?;
        if !regressions.is_empty() {
            return Err(format!(
                "{} step(s) passed in {} and not in this run:\n{}",
                regressions.len(),
                expected.display(),
                regressions.join("\n")
            ));
        }
        println!("no regression against {}", expected.display());
    }
    Ok(())
}

/// PATH for the host: the CLIs' bin directories, node's, `/usr/bin:/bin`.
fn host_path(bin_dirs: &[PathBuf]) -> String {
    let mut parts: Vec<String> = bin_dirs.iter().map(|d| d.display().to_string()).collect();
    let node = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path).find(|dir| dir.join("node").is_file()).map(|dir| dir.display().to_string())
    });
    if let Some(node) = node {
        if node != "/usr/bin" && node != "/bin" {
            parts.push(node);
        }
    }
    parts.push("/usr/bin".into());
    parts.push("/bin".into());
    parts.join(":")
}

fn step_record(name: &str, outcome: Outcome, started: std::time::Instant) -> StepRecord {
    eprintln!("[live] {name}: {} {}", outcome.result, outcome.detail);
    StepRecord {
        name: name.into(),
        result: outcome.result.into(),
        detail: outcome.detail,
        ms: started.elapsed().as_millis() as u64,
    }
}

fn sanitize(mut record: Record, sanitizer: &Sanitizer) -> Record {
    for step in &mut record.steps {
        step.detail = sanitizer.clean(&step.detail);
    }
    record
}

fn print_summary(records: &[Record]) {
    let names: Vec<&str> =
        records.first().map(|r| r.steps.iter().map(|s| s.name.as_str()).collect()).unwrap_or_default();
    let mut header = format!("{:<10}{:<10}", "runtime", "version");
    for name in &names {
        header.push_str(&format!("{:<18}", name));
    }
    println!("{header}");
    for record in records {
        let mut line = format!("{:<10}{:<10}", record.runtime, record.cli_version);
        for name in &names {
            let cell = record.step(name).map(|s| s.result.as_str()).unwrap_or("-");
            line.push_str(&format!("{:<18}", cell));
        }
        println!("{line}");
    }
}
