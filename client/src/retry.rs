//! [`ReconnectPolicy`]: how long and how often to retry a lost connection.

use crate::error::ClientError;
use std::future::Future;
use std::time::Duration;
use tokio::time::Instant;

/// Retry timing for re-establishing a lost connection.
///
/// Attempts are spaced by a backoff that starts at `initial_backoff` and
/// doubles up to `max_backoff`; no attempt starts later than `max_total`
/// after the first one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// The wait after the first failed attempt.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts.
    pub max_backoff: Duration,
    /// How long to keep trying in total.
    pub max_total: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            initial_backoff: Duration::from_millis(50),
            max_backoff: Duration::from_secs(1),
            max_total: Duration::from_secs(10),
        }
    }
}

impl ReconnectPolicy {
    /// Runs `attempt` until it succeeds, fails with an error that is not a
    /// lost connection ([`ClientError::is_connection_lost`]), or the time is
    /// up; then returns the last result.
    ///
    /// # Errors
    /// The last attempt's error.
    pub async fn retry<T, F, Fut>(&self, mut attempt: F) -> Result<T, ClientError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let deadline = Instant::now() + self.max_total;
        let mut backoff = self.initial_backoff;
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            match attempt().await {
                Ok(value) => return Ok(value),
                Err(error) if error.is_connection_lost() && Instant::now() + backoff < deadline => {
                    tracing::debug!(%error, attempts, ?backoff, "attempt failed; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(self.max_backoff);
                }
                Err(error) => {
                    tracing::debug!(%error, attempts, "giving up");
                    return Err(error);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{ErrorBody, ErrorCode};
    use std::cell::Cell;

    fn quick() -> ReconnectPolicy {
        ReconnectPolicy {
            initial_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(2),
            max_total: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn retries_lost_connections_until_success() {
        let calls = Cell::new(0);
        let result = quick()
            .retry(|| {
                calls.set(calls.get() + 1);
                let n = calls.get();
                async move {
                    if n < 3 {
                        Err(ClientError::ConnectionClosed)
                    } else {
                        Ok(n)
                    }
                }
            })
            .await;
        assert_eq!(result.unwrap(), 3);
    }

    #[tokio::test]
    async fn host_answers_are_not_retried() {
        let calls = Cell::new(0);
        let result: Result<(), _> = quick()
            .retry(|| {
                calls.set(calls.get() + 1);
                async { Err(ClientError::Host(ErrorBody::new(ErrorCode::UnknownPane, "gone"))) }
            })
            .await;
        assert!(matches!(result, Err(ClientError::Host(_))));
        assert_eq!(calls.get(), 1);
    }

    #[tokio::test]
    async fn gives_up_after_the_total_time() {
        let policy = ReconnectPolicy { max_total: Duration::from_millis(30), ..quick() };
        let started = std::time::Instant::now();
        let result: Result<(), _> = policy.retry(|| async { Err(ClientError::ConnectionClosed) }).await;
        assert!(matches!(result, Err(ClientError::ConnectionClosed)));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
