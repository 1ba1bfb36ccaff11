//! The schedule explorer over the keeper seam: random schedules of
//! clients' asks, sends, answers to a running command's `read`,
//! interrupts, resizes and snapshots against one bash pane with prompt
//! marks, with the host's jitter on, all in this process. No host or
//! keeper process and no kills: a schedule takes a second or two, so a
//! test runs many where the explorer against real processes
//! (`panehost-explore`, which also kills hosts and keepers) runs a few.
//!
//! Checked: an `ask` that no interrupt overlapped is told
//! `TURN_IN_PROGRESS` or answered by its own command (its exit status,
//! and its begin marker in the output between its offsets); every request
//! is answered, without an error the schedule cannot explain, within its
//! time; once the clients are done, the pane comes back `idle` (never
//! `busy` for good), and a last `ask` is answered by its own command.
//!
//! `PANEHOST_SEAM_EXPLORE=SEED:SCHEDULES` runs other schedules than the
//! test's own (a failure prints its seed).

use super::fake_keeper::{all_output, behaviour, FakeKeeper, SIZE};
use super::{Pane, PaneLimits};
use crate::handlers::interrupt::handle_interrupt;
use crate::handlers::turns::{handle_ask, handle_send};
use panehost_adapters::environment::HostEnvironment;
use panehost_adapters::shell_integration::bash_prompt_marks;
use panehost_adapters::CompletionSignal;
use panehost_ipc::turn::activity;
use panehost_ipc::{ErrorCode, Response, SendParams, Size};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Clients per schedule, and operations per client.
const CLIENTS: usize = 3;
const OPERATIONS: usize = 8;
/// The most the host's jitter delays it at a point, in milliseconds.
const JITTER_MS: u64 = 60;
/// The longest any request may take.
const ANSWER_WITHIN: Duration = Duration::from_secs(20);
/// The test's own schedules.
const SEED: u64 = 20_261_205;
const SCHEDULES: u64 = 6;

/// SplitMix64: a schedule's operations from its seed.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// One client's operation.
#[derive(Debug, Clone)]
enum Op {
    /// `printf 'beg-N\n'; sleep; (exit CODE)`, answered by its own end.
    Ask {
        n: u64,
        code: u32,
        sleep_ms: u64,
    },
    /// A command submitted without waiting for its end; `reads`: it reads
    /// a line (for at most that long), which a later line may answer.
    Send {
        n: u64,
        sleep_ms: u64,
        reads_ms: Option<u64>,
    },
    /// An empty line: an answer to a `read`, or a prompt drawn again.
    Answer,
    Interrupt,
    Resize(Size),
    Snapshot,
    Pause(u64),
}

fn schedule(seed: u64) -> Vec<Vec<Op>> {
    let mut draws = Draws(seed);
    let mut n = 0;
    (0..CLIENTS)
        .map(|_| {
            (0..OPERATIONS)
                .map(|_| {
                    n += 1;
                    match draws.below(20) {
                        0..=6 => Op::Ask { n, code: draws.below(8) as u32 + 1, sleep_ms: draws.below(3) * 60 },
                        7..=9 => Op::Send {
                            n,
                            sleep_ms: draws.below(3) * 80,
                            reads_ms: (draws.below(2) == 0).then(|| 100 + draws.below(400)),
                        },
                        10..=11 => Op::Answer,
                        12..=13 => Op::Interrupt,
                        14..=15 => {
                            Op::Resize(Size { cols: 40 + draws.below(100) as u16, rows: 10 + draws.below(30) as u16 })
                        }
                        16..=17 => Op::Snapshot,
                        _ => Op::Pause(draws.below(300)),
                    }
                })
                .collect()
        })
        .collect()
}

/// What the clients share: the pane, the interrupts begun and done, and
/// the failures seen.
struct World {
    pane: Arc<Pane>,
    interrupts_begun: AtomicU64,
    interrupts_done: AtomicU64,
    failures: Mutex<Vec<String>>,
}

impl World {
    fn fail(&self, what: String) {
        self.failures.lock().unwrap().push(what);
    }
}

/// A bash with the host's prompt marks over a fake keeper, its home and
/// startup files in `dir`.
async fn bash_pane(dir: &Path) -> (FakeKeeper, Arc<Pane>) {
    let environment = HostEnvironment { hook_dir: Some(dir.to_owned()), ..HostEnvironment::default() };
    let marks = bash_prompt_marks(Path::new("/bin/bash"), &environment).expect("bash gets prompt marks");
    for file in &marks.files {
        std::fs::write(&file.path, &file.contents).expect("the startup file");
    }
    std::fs::write(dir.join(".bashrc"), "PS1='ready> '\n").expect("the user's startup file");
    let home = format!("HOME={}", dir.display());
    let mut argv = vec!["/usr/bin/env", home.as_str(), "/bin/bash"];
    argv.extend(marks.args.iter().map(String::as_str));
    argv.push("-i");
    FakeKeeper::pane(&argv, SIZE, behaviour(CompletionSignal::ShellIntegration), PaneLimits::default()).await
}

async fn ask(world: &World, text: String) -> Result<Response, panehost_ipc::ErrorBody> {
    let place = world.pane.join_input_line();
    let asked = handle_ask(Arc::clone(&world.pane), place, text, Some(ANSWER_WITHIN.as_millis() as u64 / 2));
    match tokio::time::timeout(ANSWER_WITHIN, asked).await {
        Ok(answer) => answer,
        Err(_) => Err(panehost_ipc::ErrorBody::new(ErrorCode::Internal, "no answer within the test's time")),
    }
}

async fn send(world: &World, text: String) {
    let place = world.pane.join_input_line();
    let params = SendParams { pane: world.pane.info().id.clone(), text, enter: true, ..SendParams::default() };
    match tokio::time::timeout(ANSWER_WITHIN, handle_send(Arc::clone(&world.pane), place, params)).await {
        Ok(Ok(_)) => {}
        Ok(Err(error)) => world.fail(format!("send: {error:?}")),
        Err(_) => world.fail("send: no answer".to_owned()),
    }
}

/// Checks an ask's answer: `strict` when no interrupt overlapped it.
fn check_ask(world: &World, op: &Op, answer: Result<Response, panehost_ipc::ErrorBody>, strict: bool) {
    let Op::Ask { n, code, .. } = op else { return };
    match answer {
        Ok(Response::Answered(report)) => {
            if !strict {
                return;
            }
            let output = all_output(&world.pane);
            let range = output.get(report.started_offset as usize..report.completed_offset as usize).unwrap_or(&[]);
            let own = String::from_utf8_lossy(range).contains(&format!("beg-{n}\r\n"));
            if report.exit_code != Some(*code) || !own {
                world.fail(format!(
                    "{op:?} answered with exit {:?}, its marker {}: {:?}",
                    report.exit_code,
                    if own { "there" } else { "missing" },
                    String::from_utf8_lossy(range)
                ));
            }
        }
        Err(error) if error.code == ErrorCode::TurnInProgress.as_str() => {}
        Err(error) if !strict && error.code == ErrorCode::TurnTimeout.as_str() => {}
        other => world.fail(format!("{op:?}: {other:?}")),
    }
}

async fn client(world: Arc<World>, ops: Vec<Op>) {
    for op in ops {
        match &op {
            Op::Ask { n, code, sleep_ms } => {
                let done_before = world.interrupts_done.load(Ordering::SeqCst);
                let text = format!("printf 'beg-%s\\n' {n}; sleep 0.{sleep_ms:03}; (exit {code})");
                let answer = ask(&world, text).await;
                let strict = world.interrupts_begun.load(Ordering::SeqCst) == done_before;
                check_ask(&world, &op, answer, strict);
            }
            Op::Send { n, sleep_ms, reads_ms } => {
                let read = reads_ms.map(|ms| format!("read -r -t 0.{ms:03} x; ")).unwrap_or_default();
                send(&world, format!("{read}printf 'sent-%s\\n' {n}; sleep 0.{sleep_ms:03}")).await;
            }
            Op::Answer => send(&world, String::new()).await,
            Op::Interrupt => {
                world.interrupts_begun.fetch_add(1, Ordering::SeqCst);
                let place = world.pane.join_input_line();
                let interrupted = handle_interrupt(Arc::clone(&world.pane), place, false);
                match tokio::time::timeout(ANSWER_WITHIN, interrupted).await {
                    Ok(Ok(_)) => {}
                    Ok(Err(error)) => world.fail(format!("interrupt: {error:?}")),
                    Err(_) => world.fail("interrupt: no answer".to_owned()),
                }
                world.interrupts_done.fetch_add(1, Ordering::SeqCst);
            }
            Op::Resize(size) => {
                if let Err(error) = world.pane.resize(*size) {
                    world.fail(format!("resize: {error}"));
                }
            }
            Op::Snapshot => {
                let _ = world.pane.snapshot();
            }
            Op::Pause(ms) => tokio::time::sleep(Duration::from_millis(*ms)).await,
        }
    }
}

/// Runs the schedule of `seed`; its failures.
async fn run_schedule(seed: u64) -> Vec<String> {
    let dir = tempfile::tempdir().expect("a home");
    let (_keeper, pane) = bash_pane(dir.path()).await;
    let world = Arc::new(World {
        pane: Arc::clone(&pane),
        interrupts_begun: AtomicU64::new(0),
        interrupts_done: AtomicU64::new(0),
        failures: Mutex::new(Vec::new()),
    });
    let clients: Vec<_> = schedule(seed).into_iter().map(|ops| tokio::spawn(client(Arc::clone(&world), ops))).collect();
    for client in clients {
        if let Err(error) = client.await {
            world.fail(format!("a client panicked: {error}"));
        }
    }
    // Settled: every command that runs has ended (the longest read and
    // sleep are under a second), and the pane is idle.
    let settled = async {
        while pane.activity() != activity::IDLE {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(10), settled).await.is_err() {
        world.fail(format!("the pane stayed {} after the clients were done", pane.activity()));
    } else {
        let last = Op::Ask { n: 0, code: 3, sleep_ms: 0 };
        let answer = ask(&world, "printf 'beg-%s\\n' 0; (exit 3)".to_owned()).await;
        check_ask(&world, &last, answer, true);
    }
    let failures = world.failures.lock().unwrap().clone();
    failures
}

#[test]
fn random_schedules_over_the_keeper_seam_get_right_answers() {
    // Jitter is process-wide.
    if !crate::test_process::alone("pane::explore_tests::random_schedules_over_the_keeper_seam_get_right_answers") {
        return;
    }
    let (seed, schedules) = match std::env::var("PANEHOST_SEAM_EXPLORE") {
        Ok(value) => {
            let (seed, schedules) = value.split_once(':').expect("SEED:SCHEDULES");
            (seed.parse().expect("a seed"), schedules.parse().expect("a number of schedules"))
        }
        Err(_) => (SEED, SCHEDULES),
    };
    crate::jitter::install_for_test(seed, JITTER_MS);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut failed = Vec::new();
    for schedule_seed in (0..schedules).map(|k| seed.wrapping_add(k)) {
        let started = std::time::Instant::now();
        let failures = runtime.block_on(run_schedule(schedule_seed));
        eprintln!(
            "schedule {schedule_seed}: {} failure(s) in {:.1} s",
            failures.len(),
            started.elapsed().as_secs_f64()
        );
        if !failures.is_empty() {
            failed.push((schedule_seed, failures, schedule(schedule_seed)));
        }
    }
    assert!(failed.is_empty(), "{} of {schedules} schedules failed: {failed:#?}", failed.len());
}
