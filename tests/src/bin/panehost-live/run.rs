//! One runtime's run: its steps in order, each against the clock, the whole
//! within the runtime's budget, and afterwards nothing of it left running.

use crate::endpoint::Endpoint;
use crate::host::Host;
use crate::outcome::{blocked_step, skipped, timed, Outcome};
use crate::profiles::Profile;
use crate::record::{Record, StepRecord, PASS};
use crate::submit::How;
use crate::{close, detect, early, interrupt, oneshot, procs, receipt, reconnect, restore, resume, send, start};
use panehost_adapters::descriptor::{Descriptor, ResumeMode};
use panehost_client::Client;
use panehost_ipc::{PaneSummary, RuntimeInfo, TurnReport};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// The most one step may take.
pub const STEP_LIMIT: Duration = Duration::from_secs(60);
/// The most a step that starts a pane of its own may take (opencode alone
/// needs about 10 s to reach its prompt on two cores).
pub const STARTING_STEP_LIMIT: Duration = Duration::from_secs(90);
/// The most the reboot step may take: a start, a turn, the capture of the
/// session reference, a reboot and the restored CLI's redraw.
pub const REBOOT_STEP_LIMIT: Duration = Duration::from_secs(180);
/// The most one runtime may take.
pub const RUNTIME_BUDGET: Duration = Duration::from_secs(420);

/// What every step of one runtime sees.
pub struct Ctx<'a> {
    pub client: Client,
    pub host: &'a Host,
    pub endpoint: &'a Endpoint,
    pub descriptor: Descriptor,
    pub profile: &'static Profile,
    pub home: PathBuf,
    pub work: PathBuf,
    /// Every prompt the host submitted in this run, and how it got to the
    /// model: the `send` step answers for all of them.
    pub submissions: Mutex<Vec<Submitted>>,
}

/// One prompt the host submitted.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The step that submitted it.
    pub step: &'static str,
    pub word: String,
    pub how: How,
    pub detail: String,
}

/// What steps hand on to later ones.
#[derive(Debug, Default)]
pub struct State {
    /// The runtime as `runtimes` described it.
    pub info: Option<RuntimeInfo>,
    /// The first pane (start, send, completion, interrupt, close).
    pub pane: Option<PaneSummary>,
    /// The answer to the `ask` of the send step, where completion is observed.
    pub ask: Option<Result<TurnReport, String>>,
    /// How the send step's prompt reached the model, for the completion step.
    pub send_note: String,
    /// When the first pane started: session stores are searched for files
    /// newer than this.
    pub started_at: Option<SystemTime>,
    /// The first pane's session, found once its first answer was on the
    /// screen (before any other pane could write a newer one).
    pub session: Option<Result<crate::sessions::Found, String>>,
    /// The interrupt failed with keys other than Esc: try Esc at the end.
    pub diagnose_interrupt: bool,
    /// The first pane stopped at the vendor's sign-in (the profile's wall):
    /// the steps that need a model are `blocked` for this reason.
    pub blocked: Option<&'static str>,
}

/// Runs every step for `ctx`'s runtime after its `install` step.
pub async fn run(ctx: &Ctx<'_>, install: StepRecord) -> (Vec<StepRecord>, State) {
    let mut steps = vec![install];
    let mut state = State::default();
    let deadline = Instant::now() + RUNTIME_BUDGET;
    let limit = |wanted: Duration| wanted.min(deadline.saturating_duration_since(Instant::now()));
    let out_of_time = || Instant::now() >= deadline;
    let budget_spent = format!("the runtime's {} s budget was spent", RUNTIME_BUDGET.as_secs());

    macro_rules! step {
        ($name:expr, $limit:expr, $body:expr) => {
            if out_of_time() {
                steps.push(skipped($name, &budget_spent));
            } else {
                steps.push(timed($name, limit($limit), $body).await);
            }
        };
    }

    step!("detect", STEP_LIMIT, detect::run(ctx, &mut state));
    if steps.last().is_some_and(|s| s.result != PASS) && state.info.as_ref().is_none_or(|info| !info.available) {
        for name in [
            "start",
            "send",
            "completion",
            "interrupt",
            "close",
            "resume_reference",
            "resume_latest",
            "reconnect",
            "ask_at_start",
            "receipt",
            "restore_reference",
        ] {
            steps.push(skipped(name, "the host did not find the CLI"));
        }
    } else {
        step!("start", STEP_LIMIT, start::run(ctx, &mut state));
        if !ctx.profile.one_shot.is_empty() {
            step!("one_shot", STEP_LIMIT, oneshot::run(ctx, &state));
        }
        if let Some(reason) = state.blocked {
            blocked(ctx, &mut state, reason, &mut steps, &limit, &out_of_time, &budget_spent).await;
        } else {
            if state.pane.is_some() {
                step!("send", STEP_LIMIT, send::run(ctx, &mut state));
                step!("completion", STEP_LIMIT, send::completion(ctx, &mut state));
                step!("interrupt", STARTING_STEP_LIMIT, interrupt::run(ctx, &mut state));
                step!("close", STEP_LIMIT, close::run(ctx, &mut state));
            } else {
                for name in ["send", "completion", "interrupt", "close"] {
                    steps.push(skipped(name, "no pane: the start step failed"));
                }
            }
            step!("resume_reference", STARTING_STEP_LIMIT, resume::reference(ctx, &mut state));
            step!("resume_latest", STARTING_STEP_LIMIT, resume::latest(ctx, &mut state));
            step!("reconnect", STARTING_STEP_LIMIT, reconnect::run(ctx));
            // After the resumes: its session would be the latest.
            step!("ask_at_start", STARTING_STEP_LIMIT, early::run(ctx));
            if state.diagnose_interrupt && !out_of_time() {
                let diagnosis = match tokio::time::timeout(limit(STARTING_STEP_LIMIT), interrupt::try_escape(ctx)).await
                {
                    Ok(text) => text,
                    Err(_) => "Esc not tried to the end: out of time".to_owned(),
                };
                if let Some(step) = steps.iter_mut().find(|s| s.name == "interrupt") {
                    step.detail.push_str(&format!("; diagnosis, after the other steps: {diagnosis}"));
                }
            }
            // After the panes: a one-shot run of a CLI may leave state behind
            // (opencode's first interactive start after one took over 50 s).
            step!("receipt", STARTING_STEP_LIMIT, receipt::run(ctx));
            // Last: the reboot ends this run's connection to the host.
            step!("restore_reference", REBOOT_STEP_LIMIT, restore::run(ctx));
        }
    }
    steps.push(timed("leftovers", STEP_LIMIT, leftovers(ctx)).await);
    amend_send(ctx, &mut steps);
    (steps, state)
}

/// The steps after `start` for a CLI that stopped at its vendor's sign-in:
/// those that need no model run (closing the sign-in pane, the refusals of
/// the resumes the adapter has no form for, the receipt, which may be
/// refused as declared); those that need a model or a session are
/// `blocked`, saying why.
async fn blocked(
    ctx: &Ctx<'_>,
    state: &mut State,
    reason: &'static str,
    steps: &mut Vec<StepRecord>,
    limit: &dyn Fn(Duration) -> Duration,
    out_of_time: &dyn Fn() -> bool,
    budget_spent: &str,
) {
    let no_prompt = "the interactive CLI stops at its sign-in screen, so no prompt reaches a model";
    let no_session = "no session to resume: the interactive CLI never got past its sign-in screen";
    for name in ["send", "completion", "interrupt"] {
        steps.push(blocked_step(name, reason, no_prompt));
    }
    let run = |name: &'static str, wanted: Duration| {
        if out_of_time() {
            Err(skipped(name, budget_spent))
        } else {
            Ok(limit(wanted))
        }
    };
    match run("close", STEP_LIMIT) {
        Ok(within) => steps.push(timed("close", within, close::run(ctx, state)).await),
        Err(skip) => steps.push(skip),
    }
    if ctx.descriptor.resume_form(ResumeMode::Reference).is_some() {
        steps.push(blocked_step("resume_reference", reason, no_session));
    } else {
        match run("resume_reference", STARTING_STEP_LIMIT) {
            Ok(within) => steps.push(timed("resume_reference", within, resume::reference(ctx, state)).await),
            Err(skip) => steps.push(skip),
        }
    }
    if ctx.descriptor.resume_form(ResumeMode::ProviderSelection).is_some() {
        steps.push(blocked_step("resume_latest", reason, no_session));
    } else {
        match run("resume_latest", STARTING_STEP_LIMIT) {
            Ok(within) => steps.push(timed("resume_latest", within, resume::latest(ctx, state)).await),
            Err(skip) => steps.push(skip),
        }
    }
    steps.push(blocked_step("reconnect", reason, "it follows a streaming answer, and no prompt reaches a model"));
    steps.push(blocked_step("ask_at_start", reason, "no prompt reaches a model"));
    match run("receipt", STARTING_STEP_LIMIT) {
        Ok(within) => steps.push(timed("receipt", within, receipt::run(ctx)).await),
        Err(skip) => steps.push(skip),
    }
    if ctx.descriptor.resume_form(ResumeMode::Reference).is_some() {
        steps.push(blocked_step("restore_reference", reason, no_session));
    } else {
        match run("restore_reference", STEP_LIMIT) {
            Ok(within) => steps.push(timed("restore_reference", within, restore::run(ctx)).await),
            Err(skip) => steps.push(skip),
        }
    }
}

/// The `send` step answers for every prompt the host submitted in the run:
/// a later one that only got through with the runner's help fails it too.
fn amend_send(ctx: &Ctx<'_>, steps: &mut [StepRecord]) {
    let submissions = ctx.submissions.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let helped: Vec<&Submitted> = submissions.iter().filter(|s| s.step != "send" && s.how != How::Host).collect();
    let Some(send) = steps.iter_mut().find(|s| s.name == "send") else { return };
    if send.result != PASS || helped.is_empty() {
        return;
    }
    let later: Vec<String> =
        helped.iter().map(|s| format!("{} in the {} step: {}", s.word, s.step, s.detail)).collect();
    send.result = crate::record::FAIL.to_owned();
    send.detail = format!(
        "{}; but of the host's {} submissions in this run, {} did not reach the model by themselves: {}",
        send.detail,
        submissions.len(),
        helped.len(),
        later.join("; ")
    );
}

/// Closes any pane a step left behind (one that ran out of time), then
/// checks that no process carrying the scratch HOME outlives the runtime's
/// run, ending any that does by its pid.
pub async fn leftovers(ctx: &Ctx<'_>) -> Outcome {
    let mut notes = Vec::new();
    match ctx.client.list().await {
        Ok(panes) => {
            for pane in panes {
                let outcome = close::close_and_check(ctx, &pane).await;
                notes.push(format!("closed pane {} left by a step: {}", pane.id, outcome.detail));
            }
        }
        Err(error) => notes.push(format!("list: {error}")),
    }
    // The host itself carries the scratch HOME; so do the keepers of live
    // panes, and there are none now.
    let mut left = procs::with_home(&ctx.home, &[ctx.host.pid(), ctx.endpoint.pid()]);
    for _ in 0..10 {
        if left.is_empty() {
            break;
        }
        crate::outcome::pause(300).await;
        left = procs::with_home(&ctx.home, &[ctx.host.pid(), ctx.endpoint.pid()]);
    }
    if left.is_empty() {
        notes.insert(0, "no process of the run outlives it".into());
        Outcome::pass(notes.join("; "))
    } else {
        procs::end(&left).await;
        notes.insert(0, format!("still running 3 s after the last close, ended by pid: {}", procs::list(&left)));
        Outcome::fail(notes.join("; "))
    }
}

/// The record of a run.
pub fn record(runtime: &str, state: &State, host_version: &str, steps: Vec<StepRecord>) -> Record {
    let info = state.info.as_ref();
    Record {
        runtime: runtime.to_owned(),
        cli_version: info.and_then(|i| i.version.as_deref()).and_then(dotted_version).unwrap_or_default(),
        binary_sha256: info.and_then(|i| i.sha256.clone()).unwrap_or_default(),
        host_version: host_version.to_owned(),
        date: today(),
        steps,
    }
}

/// The first dotted version number in `text` (`codex-cli 0.171.0` → `0.171.0`).
pub fn dotted_version(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|word| word.trim_matches('.'))
        .find(|word| word.split('.').count() >= 2 && word.split('.').all(|part| !part.is_empty()))
        .map(str::to_owned)
}

/// Today, UTC, as `YYYY-MM-DD`.
pub fn today() -> String {
    let (moment, _) = panehost_adapters::canary::clock::utc_stamps(SystemTime::now());
    moment[..10].to_owned()
}
