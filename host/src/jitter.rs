//! Jitter: delays at named points of the host, drawn from a seed, so that
//! a test or the schedule explorer can search the host's own
//! interleavings (the moment between writing a submission's Enter and
//! recording it, say) and not only the timings of its clients.
//!
//! `PANEHOST_JITTER=SEED:MAX_MS` in the host's environment turns it on:
//! at each point the host waits a delay drawn from the seed, none half of
//! the time, else up to `MAX_MS` (at most [`MAX_DELAY_MS`]). Unset, as in
//! use, a point costs one load and one branch. The draws follow the order
//! the points are reached in, which the real timings decide: one seed
//! gives the same sequence of delays, not the same schedule.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// The variable that turns jitter on.
pub const JITTER_ENV: &str = "PANEHOST_JITTER";

/// The longest delay a point may be given, in milliseconds.
pub const MAX_DELAY_MS: u64 = 2000;

/// A named place where the host may be delayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Point {
    /// A submission's Enter is written; the pane's turns are not told yet.
    AfterEnter,
    /// An interrupt's keys are written; its confirmation has not begun.
    AfterInterruptKeys,
    /// Output with terminal notices (prompt marks, bells) is parsed into
    /// the screen, and the pane's turns are not told of them yet.
    NoticesParsed,
    /// A started pane's program runs; the pane has not joined the
    /// registry (it is not listed yet).
    BeforePaneJoins,
}

/// Jitter as configured.
#[derive(Debug)]
struct Jitter {
    state: AtomicU64,
    max_ms: u64,
}

static JITTER: OnceLock<Jitter> = OnceLock::new();

/// Reads [`JITTER_ENV`] and turns jitter on when it is set.
///
/// # Errors
/// A value that is not `SEED:MAX_MS` with both unsigned integers and
/// `MAX_MS` at most [`MAX_DELAY_MS`], named in the message.
pub fn install_from_env() -> anyhow::Result<()> {
    let Some(value) = std::env::var_os(JITTER_ENV) else { return Ok(()) };
    let value = value.to_string_lossy();
    let (seed, max_ms) = parse(&value).map_err(|why| anyhow::anyhow!("{JITTER_ENV}={value:?}: {why}"))?;
    let _ = JITTER.set(Jitter { state: AtomicU64::new(seed), max_ms });
    tracing::warn!(seed, max_ms, "jitter on: the host delays itself at chosen points (for tests)");
    Ok(())
}

/// Turns jitter on for a test that has its process to itself
/// (`crate::test_process::alone`): jitter is process-wide.
#[cfg(test)]
pub(crate) fn install_for_test(seed: u64, max_ms: u64) {
    let _ = JITTER.set(Jitter { state: AtomicU64::new(seed), max_ms: max_ms.min(MAX_DELAY_MS) });
}

fn parse(value: &str) -> Result<(u64, u64), String> {
    let (seed, max_ms) = value.split_once(':').ok_or("expected SEED:MAX_MS")?;
    let seed = seed.trim().parse::<u64>().map_err(|err| format!("the seed: {err}"))?;
    let max_ms = max_ms.trim().parse::<u64>().map_err(|err| format!("MAX_MS: {err}"))?;
    if max_ms > MAX_DELAY_MS {
        return Err(format!("MAX_MS {max_ms} is over {MAX_DELAY_MS}"));
    }
    Ok((seed, max_ms))
}

/// Waits at `point` for the delay drawn next, when jitter is on.
pub(crate) async fn at(point: Point) {
    let Some(jitter) = JITTER.get() else { return };
    let delay = jitter.draw();
    if !delay.is_zero() {
        tracing::trace!(?point, ms = delay.as_millis() as u64, "jitter");
        tokio::time::sleep(delay).await;
    }
}

impl Jitter {
    /// The next delay: none half of the time, else up to `max_ms`.
    fn draw(&self) -> Duration {
        let bits = split_mix(self.state.fetch_add(GOLDEN_GAMMA, Ordering::Relaxed));
        if bits & 1 == 0 || self.max_ms == 0 {
            return Duration::ZERO;
        }
        Duration::from_millis((bits >> 1) % (self.max_ms + 1))
    }
}

const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function.
fn split_mix(state: u64) -> u64 {
    let mut z = state.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_bounded_and_malformed_ones_named() {
        assert_eq!(parse("7:250"), Ok((7, 250)));
        assert_eq!(parse(" 0 : 0 "), Ok((0, 0)));
        assert_eq!(parse(&format!("{}:{MAX_DELAY_MS}", u64::MAX)), Ok((u64::MAX, MAX_DELAY_MS)));
        assert!(parse("7").unwrap_err().contains("SEED:MAX_MS"));
        assert!(parse("7:2001").unwrap_err().contains("over"));
        assert!(parse("x:5").unwrap_err().contains("seed"));
        assert!(parse("5:-1").unwrap_err().contains("MAX_MS"));
        assert!(parse("").is_err());
    }

    #[test]
    fn draws_are_none_half_the_time_and_never_over_the_most() {
        let jitter = Jitter { state: AtomicU64::new(42), max_ms: 300 };
        let draws: Vec<Duration> = (0..1000).map(|_| jitter.draw()).collect();
        let none = draws.iter().filter(|delay| delay.is_zero()).count();
        assert!((400..600).contains(&none), "{none} of 1000 without delay");
        assert!(draws.iter().all(|delay| *delay <= Duration::from_millis(300)));
        let again = Jitter { state: AtomicU64::new(42), max_ms: 300 };
        assert_eq!(draws, (0..1000).map(|_| again.draw()).collect::<Vec<_>>(), "one seed, one sequence");
    }
}
