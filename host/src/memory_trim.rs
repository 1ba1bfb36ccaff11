//! Handing freed heap memory back to the system.
//!
//! The allocator keeps freed memory for reuse. When many panes' terminal
//! models go to sleep, their grids are freed in small pieces scattered
//! through the heap, and none of it leaves the process unless the
//! allocator is asked to return free pages (`malloc_trim`). The same holds
//! for what a burst of connections or large answers held. Sleeping models,
//! answers that gave back their budget and ended connections ask for a
//! trim; one task runs it, at most every [`MEMORY_TRIM_INTERVAL`], off the
//! async threads.

use crate::limits::MEMORY_TRIM_INTERVAL;
use std::sync::OnceLock;
use tokio::sync::Notify;

fn wanted() -> &'static Notify {
    static WANTED: OnceLock<Notify> = OnceLock::new();
    WANTED.get_or_init(Notify::new)
}

/// Asks for a trim soon. Cheap; many requests make one trim.
pub(crate) fn request() {
    wanted().notify_one();
}

/// Runs trims as they are requested, for the host's life.
pub(crate) async fn run() {
    loop {
        wanted().notified().await;
        // Let the models that fall asleep together share one trim.
        tokio::time::sleep(MEMORY_TRIM_INTERVAL).await;
        let started = std::time::Instant::now();
        let _ = tokio::task::spawn_blocking(trim).await;
        tracing::debug!(took_us = started.elapsed().as_micros() as u64, "freed memory handed back");
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    // Safety: `malloc_trim` takes no pointer, only the bytes to leave at
    // the top of the heap, and glibc makes it safe to call from any thread
    // at any time (it takes each arena's lock).
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {
    // Other allocators return freed memory on their own terms.
}
