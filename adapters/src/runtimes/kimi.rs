//! `kimi`: Kimi Code, the Python CLI published on PyPI as `kimi-cli`.
//! Flags checked against `kimi --help` and `kimi login --help` of 1.50.0
//! (`adapters/evidence/kimi.json`): `--session` ("With ID: resume that
//! session. Without ID: interactively pick a session."), `--continue`
//! ("Continue the previous session for the working directory"), `-m`,
//! `--quiet` with `-p` (print mode: only the final message) and `kimi
//! login`.
//!
//! 1.50.0 is the last working release: 1.51.0 and 1.52.0 only print that
//! the CLI is archived, and 1.52.0 with no argument runs an install script
//! of its successor fetched from the internet. A later kimi is not this
//! program. panehost refuses it from 1.52.0 (`refused_versions`): a pane
//! that started it would run a remote installer. 1.51.0 only prints the
//! notice and exits, which the floor's flags would not find either, but it
//! does no harm.
//!
//! Seen live offline (tests/live-records/kimi.json, docs/LIVE.md):
//!
//! - its banner prints `Session: <uuid>`, which `--session <uuid>` resumes;
//!   an id it does not know starts a new session under that id without a
//!   word, so the host resumes only the ids it read from the CLI's own
//!   banner;
//! - `--continue` is not declared: it resumes the session the directory
//!   last *exited cleanly* from (the CLI records it only when it exits by
//!   itself), so after a pane is closed by the host it found none ("No
//!   previous session found for the working directory"), and where an
//!   older session had exited cleanly it would quietly resume that one;
//! - Ctrl-C and Esc stop a running answer (and its request); at the prompt
//!   Ctrl-C does not exit;
//! - `KIMI_CLI_NO_AUTO_UPDATE` keeps its startup from offering an upgrade
//!   or a migration that Enter would accept.

use super::{agent_cli, receipt, resume, strings, variables, UNOBSERVED};
use crate::descriptor::{
    Descriptor, Evidence, LoginForm, ModelForm, ReferenceCapture, RefusedVersions, ResumeMode, SelfUpdateOff,
    VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.50.0".into()) },
        // A model's name in ~/.kimi/config.toml.
        model: ModelForm::Optional { flag: "-m".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--session", "{reference}"]),
            resume(ResumeMode::InteractivePicker, &["--session"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/kimi.json`, step `resume_reference`).
        references_proven_live: true,
        reference_capture: ReferenceCapture::OutputMarker("Session: ".into()),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        self_update_off: SelfUpdateOff {
            environment: variables(&[("KIMI_CLI_NO_AUTO_UPDATE", "1")]),
            ..SelfUpdateOff::default()
        },
        // Print mode answers once and exits. It has no read-only mode (it
        // approves tool calls): a receipt needs the weaker boundary
        // accepted.
        receipt: receipt(&["--quiet", "-p", "{prompt}"]),
        pypi_distribution: Some("kimi-cli".into()),
        refused_versions: vec![RefusedVersions {
            from: "1.52.0".into(),
            before: None,
            reason: "retired; runs a remote installer at start".into(),
        }],
        limitations: strings(&[
            limitation::PROVIDER_SELECTION_UNSUPPORTED,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
        ]),
        ..agent_cli("kimi", "Kimi Code", &["kimi"], Evidence::CapturedHelp { file: "kimi.json".into() })
    }
}
