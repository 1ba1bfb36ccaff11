//! `wait_for`: waits until a pane's screen, or its output, matches a
//! pattern, within a timeout.
//!
//! The pattern is compiled with bounds (its length, the size of the
//! compiled program), and matching is linear in the text. The screen is
//! looked at once at first and then at most every
//! [`SCREEN_RECHECK`](crate::limits::WAIT_SCREEN_RECHECK) while the model
//! parses more; the output is read through a cursor of the wait's own, and
//! searched over the bytes just read plus the
//! [`OUTPUT_MATCH_SPAN`] before them.

use crate::limits::{self, WAIT_REGEX_SIZE_LIMIT, WAIT_SCREEN_RECHECK};
use crate::pane::Pane;
use crate::pane::RingRead;
use panehost_ipc::wait::{
    cut_matched, DEFAULT_WAIT_TIMEOUT_MS, MAX_MATCHED_LEN, MAX_WAIT_PATTERN_LEN, MAX_WAIT_TIMEOUT_MS, OUTPUT_MATCH_SPAN,
};
use panehost_ipc::{ErrorBody, ErrorCode, Response, WaitForParams, WaitMatch, WaitTarget};
use regex::bytes::{Regex, RegexBuilder};
use std::sync::Arc;
use tokio::time::{timeout_at, Instant};

/// Checks the request, then waits.
pub(crate) async fn handle_wait_for(pane: Arc<Pane>, params: WaitForParams) -> Result<Response, ErrorBody> {
    let pattern = compile(&params.pattern)?;
    let timeout_ms = params.timeout_ms.unwrap_or(DEFAULT_WAIT_TIMEOUT_MS);
    if timeout_ms > MAX_WAIT_TIMEOUT_MS {
        return Err(invalid(format!("timeout_ms {timeout_ms} is over the limit of {MAX_WAIT_TIMEOUT_MS} (a day)")));
    }
    let deadline = Instant::now() + std::time::Duration::from_millis(timeout_ms);
    let found = match params.target {
        WaitTarget::Screen => wait_on_screen(&pane, &pattern, deadline, timeout_ms).await?,
        WaitTarget::Output => {
            let end = pane.current_progress().end;
            let from = params.from.unwrap_or(end);
            if from > end {
                return Err(ErrorBody::new(
                    ErrorCode::OffsetOutOfRange,
                    format!("offset {from} is beyond the end of pane {} ({end})", pane.info().id),
                ));
            }
            wait_on_output(&pane, &pattern, from, deadline, timeout_ms).await?
        }
    };
    Ok(Response::Waited(WaitMatch {
        pane: pane.info().id.clone(),
        target: params.target,
        offset: found.offset,
        matched: found.matched,
    }))
}

/// Where a pattern was found.
struct Found {
    offset: u64,
    matched: String,
}

/// Returns true once the screen of `pane` shows `text`, false when
/// `limit` passes first or the pane's program ends without it showing.
pub(crate) async fn until_screen_shows(pane: &Pane, text: &str, limit: std::time::Duration) -> bool {
    let Ok(pattern) = RegexBuilder::new(&regex::escape(text))
        .size_limit(WAIT_REGEX_SIZE_LIMIT)
        .dfa_size_limit(WAIT_REGEX_SIZE_LIMIT)
        .build()
    else {
        return false;
    };
    let limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
    wait_on_screen(pane, &pattern, Instant::now() + limit, limit_ms).await.is_ok()
}

fn compile(pattern: &str) -> Result<Regex, ErrorBody> {
    if pattern.is_empty() {
        return Err(invalid("the pattern is empty: it would match anything".into()));
    }
    if pattern.len() > MAX_WAIT_PATTERN_LEN {
        return Err(invalid(format!("the pattern is {} bytes long; at most {MAX_WAIT_PATTERN_LEN}", pattern.len())));
    }
    RegexBuilder::new(pattern)
        .size_limit(WAIT_REGEX_SIZE_LIMIT)
        .dfa_size_limit(WAIT_REGEX_SIZE_LIMIT)
        .build()
        .map_err(|err| invalid(format!("the pattern is not a regular expression this host takes: {err}")))
}

fn invalid(message: String) -> ErrorBody {
    ErrorBody::new(ErrorCode::InvalidArgument, message)
}

async fn wait_on_screen(pane: &Pane, pattern: &Regex, deadline: Instant, timeout_ms: u64) -> Result<Found, ErrorBody> {
    let mut parsed = pane.parsed_offset();
    let mut progress = pane.progress();
    loop {
        parsed.borrow_and_update();
        let (offset, text) = pane.screen_text();
        if let Some(found) = pattern.find(text.as_bytes()) {
            let matched = String::from_utf8_lossy(found.as_bytes());
            return Ok(Found { offset, matched: cut_matched(&matched, MAX_MATCHED_LEN) });
        }
        let state = progress.latest();
        if let Some(status) = &state.exit {
            if offset >= state.end {
                return Err(exited_first(pane, status.code, "screen"));
            }
        }
        // At most one look per interval, however fast the model parses.
        let next_look = Instant::now() + WAIT_SCREEN_RECHECK;
        let changed = timeout_at(deadline, async {
            tokio::select! {
                _ = parsed.changed() => {}
                _ = progress.changed() => {}
            }
            tokio::time::sleep_until(next_look).await;
        })
        .await;
        if changed.is_err() {
            let message = format!(
                "the screen of pane {} did not match within {timeout_ms} ms (it reflects the output up to offset \
                 {offset}); `inspect` shows it",
                pane.info().id
            );
            return Err(ErrorBody::new(ErrorCode::WaitTimeout, message));
        }
    }
}

async fn wait_on_output(
    pane: &Pane,
    pattern: &Regex,
    from: u64,
    deadline: Instant,
    timeout_ms: u64,
) -> Result<Found, ErrorBody> {
    let mut progress = pane.progress();
    // The bytes searched: the last OUTPUT_MATCH_SPAN bytes before the
    // cursor, then what is read; `window_start` is the offset of the first.
    let mut window: Vec<u8> = Vec::new();
    let mut window_start = from;
    let mut cursor = from;
    let mut skipped = 0u64;
    loop {
        progress.mark_seen();
        match pane.read_output(cursor, limits::WAIT_FOR_READ_BYTES) {
            RingRead::Bytes(bytes) => {
                cursor += bytes.len() as u64;
                window.extend_from_slice(&bytes);
                if let Some(found) = pattern.find(&window) {
                    let matched = String::from_utf8_lossy(found.as_bytes());
                    return Ok(Found {
                        offset: window_start + found.end() as u64,
                        matched: cut_matched(&matched, MAX_MATCHED_LEN),
                    });
                }
                if window.len() > OUTPUT_MATCH_SPAN {
                    let drop = window.len() - OUTPUT_MATCH_SPAN;
                    window.drain(..drop);
                    window_start += drop as u64;
                }
                continue;
            }
            RingRead::Behind { start } => {
                // The ring moved past the cursor: what it dropped was not
                // searched.
                skipped += start - cursor;
                cursor = start;
                window.clear();
                window_start = start;
                continue;
            }
            RingRead::UpToDate | RingRead::Ahead => {}
        }
        let state = progress.peek();
        if let Some(status) = &state.exit {
            if cursor >= state.end {
                return Err(exited_first(pane, status.code, "output"));
            }
            continue;
        }
        if timeout_at(deadline, progress.changed()).await.is_err() {
            let unsearched = if skipped > 0 {
                format!("; {skipped} bytes passed out of the ring before they were searched")
            } else {
                String::new()
            };
            let message = format!(
                "the output of pane {} from offset {from} did not match within {timeout_ms} ms (read up to offset \
                 {cursor}{unsearched})",
                pane.info().id
            );
            return Err(ErrorBody::new(ErrorCode::WaitTimeout, message));
        }
    }
}

fn exited_first(pane: &Pane, code: u32, target: &str) -> ErrorBody {
    ErrorBody::new(
        ErrorCode::PaneExited,
        format!("the process of pane {} exited (code {code}) before its {target} matched", pane.info().id),
    )
}

#[cfg(test)]
mod tests {
    use super::compile;

    #[test]
    fn patterns_are_bounded_and_checked() {
        assert!(compile("claude> $").is_ok());
        assert_eq!(compile("").unwrap_err().code, "INVALID_ARGUMENT");
        assert_eq!(compile("(unclosed").unwrap_err().code, "INVALID_ARGUMENT");
        assert_eq!(compile(&"a".repeat(1025)).unwrap_err().code, "INVALID_ARGUMENT");
        assert!(compile(&"a".repeat(1024)).is_ok());
        // Short to write, huge once compiled: refused, not built.
        let err = compile(r"(\w{1000}){1000}").unwrap_err();
        assert_eq!(err.code, "INVALID_ARGUMENT");
        assert!(err.message.contains("size limit"), "{}", err.message);
    }
}
