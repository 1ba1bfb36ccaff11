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

/// Runs `work`, which blocks a while, where no `.await` can hand it off
/// (code that is not async, or holds what it borrows): in place on the
/// multi-thread runtime, so that the worker's other tasks move to another
/// thread meanwhile; anywhere else it simply runs.
pub(crate) fn in_place<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(work),
        _ => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::Poll;
    use std::thread;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_work_runs_on_the_thread_that_goes_on_with_its_result() {
        let (worked_on, went_on) = tokio::spawn(async {
            let worked_on = run(|| Ok(thread::current().id())).await.unwrap();
            (worked_on, thread::current().id())
        })
        .await
        .unwrap();
        assert_eq!(worked_on, went_on, "no other thread was woken to go on");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_caller_polled_in_place_is_answered_pending_before_anything_blocks() {
        let blocked = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&blocked);
        let mut work = Box::pin(run(move || {
            flag.store(true, Ordering::SeqCst);
            Ok(7)
        }));
        let first = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
        assert!(first.is_pending(), "the first poll must not block");
        assert!(!blocked.load(Ordering::SeqCst));
        assert_eq!(tokio::spawn(work).await.unwrap().unwrap(), 7);
    }

    #[tokio::test]
    async fn on_a_current_thread_runtime_the_work_goes_to_the_blocking_pool() {
        let caller = thread::current().id();
        let worked_on = run(|| Ok(thread::current().id())).await.unwrap();
        assert_ne!(worked_on, caller);
    }

    #[tokio::test]
    async fn an_error_of_the_work_is_returned() {
        let err = run(|| Err::<(), _>(io::Error::other("no keeper"))).await.unwrap_err();
        assert_eq!(err.to_string(), "no keeper");
    }
}
