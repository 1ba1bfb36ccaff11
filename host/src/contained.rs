//! Panics of a dependency, contained.
//!
//! The terminal model (vt100) panics on some output (a wide character in a
//! grid one column wide, say). Such a panic is an input, not a bug of the
//! host's: [`contained`] runs the code that may panic and turns a panic into
//! `None`, and the panic hook reports it as a logged error of the host
//! rather than as a crash. Every other panic is reported as before.

use std::cell::Cell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::task::Poll;

thread_local! {
    /// What the code running under [`contained`] on this thread is, if any.
    static CONTAINING: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Runs `f`; a panic inside it is logged as an error of `what` and gives
/// `None`. The caller decides what replaces the result.
pub fn contained<R>(what: &'static str, f: impl FnOnce() -> R) -> Option<R> {
    let outer = CONTAINING.with(|containing| containing.replace(Some(what)));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINING.with(|containing| containing.set(outer));
    result.ok()
}

/// Runs `future` to its end, each of its polls under [`contained`]: a
/// panic in any of them is logged as an error of `what` and gives `None`
/// (the future is dropped then).
pub async fn contained_future<F: Future>(what: &'static str, future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| match contained(what, || future.as_mut().poll(cx)) {
        Some(Poll::Ready(value)) => Poll::Ready(Some(value)),
        Some(Poll::Pending) => Poll::Pending,
        None => Poll::Ready(None),
    })
    .await
}

/// Installs the panic hook: a panic under [`contained`] is logged (with its
/// location) as an error; any other goes to the hook that was installed
/// before, which prints it.
pub fn install_panic_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| match CONTAINING.with(Cell::get) {
        Some(what) => {
            let location = info.location().map(|at| at.to_string()).unwrap_or_default();
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|text| (*text).to_owned())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            tracing::error!(%location, %message, "{what} failed; contained");
        }
        None => previous(info),
    }));
}

#[cfg(test)]
mod tests {
    use super::{contained, contained_future};

    #[test]
    fn a_panic_inside_is_none_and_a_value_is_some() {
        assert_eq!(contained("a test", || 7), Some(7));
        assert_eq!(contained("a test", || -> u8 { panic!("an input the code cannot take") }), None);
        // Nested: the outer one still contains after the inner one ends.
        let outer = contained("outer", || {
            let inner = contained("inner", || -> u8 { panic!("inner") });
            assert_eq!(inner, None);
            panic!("outer")
        });
        assert_eq!(outer, None::<()>);
    }

    #[tokio::test]
    async fn a_future_that_panics_after_waiting_is_none() {
        assert_eq!(contained_future("a test", async { 7 }).await, Some(7));
        let panics = async {
            tokio::task::yield_now().await;
            panic!("a defect after the first poll")
        };
        assert_eq!(contained_future("a test", panics).await, None::<()>);
    }
}
