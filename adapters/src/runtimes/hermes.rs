//! `hermes`: Hermes Agent (`hermes-agent` on PyPI). Flags checked against
//! `hermes --help` of 0.19.0 (`adapters/evidence/hermes.json`): `--resume
//! SESSION` ("Resume a previous session by ID or title"), `--continue`
//! ("the most recent if no name given"), and `hermes chat` with `-q QUERY`
//! ("Single query (non-interactive mode)"), `-Q` (only the final response
//! and the session id) and `--source` ("Use 'tool' for third-party
//! integrations that should not appear in user session lists").
//!
//! Seen live offline (tests/live-records/hermes.json, docs/LIVE.md):
//!
//! - its classic REPL prints `Session: <id>` in its banner, the id being
//!   the start time and six hex digits (`20261201_185953_1444df`), which
//!   `--resume <id>` resumes, redrawing the conversation; an id it does not
//!   know is not refused: it says "Session not found" and starts a new
//!   session under that id;
//! - `--continue` resumes the newest session whose source is `cli`,
//!   whatever its working directory;
//! - a one-shot `-z PROMPT` is also a `cli` session, so after one,
//!   `--continue` resumed the one-shot's conversation instead of the
//!   person's. The receipt therefore runs `hermes chat -Q --source tool -q
//!   PROMPT`, a session `--continue` does not pick;
//! - Ctrl-C (its footer's "Ctrl+C cancel") stops drawing an answer, and at
//!   the prompt exits; Esc does nothing. The request to the model stays
//!   open after Ctrl-C (the fixture streamed on to it):
//!   `INTERRUPT_KEEPS_REQUEST`.

use super::{agent_cli, receipt, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, ReferenceCapture, ResumeMode, VersionProbe};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.19.0".into()) },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
        ],
        // Only an id: `--resume` also takes a session's title.
        reference_pattern: Some(ReferencePattern::constant("[0-9]{8}_[0-9]{6}_[0-9a-f]{6}")),
        // Its exact resume is proven live (`tests/live-records/hermes.json`, step `resume_reference`).
        references_proven_live: true,
        reference_capture: ReferenceCapture::OutputMarker("Session: ".into()),
        // It has no read-only mode: a receipt needs the weaker boundary
        // accepted. The model and its key are in ~/.hermes/config.yaml.
        receipt: receipt(&["chat", "-Q", "--source", "tool", "-q", "{prompt}"]),
        interrupt_keeps_request: true,
        pypi_distribution: Some("hermes-agent".into()),
        limitations: strings(&[
            UNOBSERVED,
            limitation::LOGIN_NOT_IN_TERMINAL,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::INTERRUPT_KEEPS_REQUEST,
        ]),
        ..agent_cli("hermes", "Hermes Agent", &["hermes"], Evidence::CapturedHelp { file: "hermes.json".into() })
    }
}
