//! Blocking work on a request's path, done on the thread that serves the
//! request.
//!
//! `spawn_blocking` hands work to a thread of the blocking pool and, when it
//! is done, wakes an async worker to go on: two hand-offs between threads.
//! On a small machine whose idle cores sleep, each costs a core's wake-up
//! (about 0.1 to 0.3 ms measured here), more than most of the work itself.
//! [`run`] does the work in place instead (`block_in_place`): the worker's
//! other tasks move to another thread while it blocks, and the request goes
//! on with no thread to wake.

use std::io;
use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work`, which blocks, for the calling task: in place on the
/// multi-thread runtime, on the blocking pool on a current-thread runtime
/// (which cannot block in place).
///
/// Blocking in place holds up everything else the calling task does. A
/// connection polls a request's first step inside its own task and gives
/// the request a task of its own only when that step waits; so `run`
/// yields first, and the blocking happens in the request's own task.
///
/// # Errors
/// The work's error, or (on the blocking pool) its panic as an error.
pub(crate) async fn run<T: Send + 'static>(work: impl FnOnce() -> io::Result<T> + Send + 'static) -> io::Result<T> {
    tokio::task::yield_now().await;
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        tokio::task::block_in_place(work)
    } else {
        tokio::task::spawn_blocking(work).await.map_err(io::Error::other)?
    }
}
