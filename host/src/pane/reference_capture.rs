//! Capturing a pane's native session reference, from its output or from
//! its CLI's session store, as the runtime's descriptor says; a reference is
//! kept only if it passes the runtime's anchored pattern.

use super::Pane;
use panehost_adapters::descriptor::ReferenceCapture;

impl Pane {
    /// Looks for the session reference after the runtime's output marker.
    pub(super) fn capture_reference_from_output(&self, data: &[u8]) {
        let ReferenceCapture::OutputMarker(marker) = &self.reference_capture else { return };
        let text = String::from_utf8_lossy(data);
        for (at, _) in text.match_indices(marker.as_str()) {
            let candidate: String = text[at + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                .collect();
            self.capture_reference(&candidate);
        }
    }

    /// Looks for the session reference in the CLI's session store, for
    /// runtimes that capture it there (at most every few seconds).
    pub async fn capture_reference_from_store(&self) {
        let Some(capture) = &self.session_capture else { return };
        if let Some(found) = capture.scan().await {
            tracing::debug!(pane = %self.info.id, path = %found.path.display(), "session store entry");
            self.capture_reference(&found.reference);
        }
    }

    /// Records a session reference that passes the runtime's pattern.
    pub(super) fn capture_reference(&self, reference: &str) {
        let valid = self.reference_pattern.as_ref().is_some_and(|pattern| pattern.accepts(reference));
        if !valid {
            return;
        }
        if !self.durable.set_native_reference(reference) {
            return;
        }
        tracing::info!(pane = %self.info.id, reference, "session reference captured");
    }
}
