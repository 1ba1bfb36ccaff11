//! The run's books: operations by kind and outcome, error codes, named
//! counters, and every failure with its details.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failures kept with their details; later ones are only counted.
const DETAILED_FAILURES: usize = 300;

/// How one operation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Answered as it should be.
    Ok,
    /// Refused with an error the protocol documents for the situation.
    Expected(String),
    /// Lost because the host was killed while it was in flight.
    LostToRestart,
    /// Anything else: an undocumented error, a wrong answer, a closed
    /// connection, a timeout.
    Failed(String),
}

/// Counts of one operation kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OperationCounts {
    /// Answered as it should be.
    pub ok: u64,
    /// Refused with a documented error.
    pub expected_errors: u64,
    /// Lost to the host's restart.
    pub lost_to_restart: u64,
    /// Failed.
    pub failed: u64,
}

/// One failure.
#[derive(Debug, Clone)]
pub struct Failure {
    /// When it happened, from the start of the run.
    pub at: Duration,
    /// What failed (an operation kind or a check).
    pub what: String,
    /// The details.
    pub detail: String,
}

#[derive(Debug, Default)]
struct Books {
    operations: BTreeMap<String, OperationCounts>,
    error_codes: BTreeMap<String, u64>,
    counters: BTreeMap<String, u64>,
    failures: Vec<Failure>,
    failure_count: u64,
    failures_by_what: BTreeMap<String, u64>,
}

/// The run's books, shared by every task.
#[derive(Debug)]
pub struct Ledger {
    started: Instant,
    books: Mutex<Books>,
}

impl Ledger {
    /// Empty books; times are counted from now.
    pub fn new() -> Ledger {
        Ledger { started: Instant::now(), books: Mutex::new(Books::default()) }
    }

    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.books.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Records how an operation of `kind` ended.
    pub fn record(&self, kind: &str, verdict: Verdict) {
        let failure = {
            let mut books = self.books();
            let counts = books.operations.entry(kind.to_owned()).or_default();
            match &verdict {
                Verdict::Ok => counts.ok += 1,
                Verdict::Expected(code) => {
                    counts.expected_errors += 1;
                    *books.error_codes.entry(code.clone()).or_default() += 1;
                }
                Verdict::LostToRestart => counts.lost_to_restart += 1,
                Verdict::Failed(_) => counts.failed += 1,
            }
            match verdict {
                Verdict::Failed(detail) => Some(detail),
                _ => None,
            }
        };
        if let Some(detail) = failure {
            self.fail(kind, detail);
        }
    }

    /// Records a failure that is not an operation's (a check, a follower).
    pub fn fail(&self, what: &str, detail: impl Into<String>) {
        let failure = Failure { at: self.started.elapsed(), what: what.to_owned(), detail: detail.into() };
        eprintln!("[soak] FAILURE {:>7.1}s {}: {}", failure.at.as_secs_f64(), failure.what, failure.detail);
        let mut books = self.books();
        books.failure_count += 1;
        *books.failures_by_what.entry(failure.what.clone()).or_default() += 1;
        if books.failures.len() < DETAILED_FAILURES {
            books.failures.push(failure);
        }
    }

    /// Adds `n` to the counter `name`.
    pub fn count(&self, name: &str, n: u64) {
        *self.books().counters.entry(name.to_owned()).or_default() += n;
    }

    /// Every counter, by name.
    pub fn counters(&self) -> BTreeMap<String, u64> {
        self.books().counters.clone()
    }

    /// Operations by kind.
    pub fn operations(&self) -> BTreeMap<String, OperationCounts> {
        self.books().operations.clone()
    }

    /// Documented error codes received, by code.
    pub fn error_codes(&self) -> BTreeMap<String, u64> {
        self.books().error_codes.clone()
    }

    /// How many failures were recorded.
    pub fn failure_count(&self) -> u64 {
        self.books().failure_count
    }

    /// How many failures were recorded under `what`.
    pub fn failures_of(&self, what: &str) -> u64 {
        self.books().failures_by_what.get(what).copied().unwrap_or(0)
    }

    /// The failures kept with details, oldest first.
    pub fn failures(&self) -> Vec<Failure> {
        self.books().failures.clone()
    }
}
