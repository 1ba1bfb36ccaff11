//! `amp`: Amp (`@ampcode/cli`). Flags checked against `amp --help` and
//! `amp threads continue --help` of 0.0.1790142911-g7618fb
//! (`adapters/evidence/amp.json`): `amp threads continue <id>` continues an
//! exact thread, and with no id it shows a picker; `amp last` continues
//! the last thread of this checkout. Threads are stored by the provider.
//!
//! Seen live offline (tests/live-records/amp.json): with no key it starts
//! its login flow ("Would you like to log in to Amp?"); with `AMP_URL`
//! pointed at a local server, `amp -x` asks that server for
//! `/api/internal?getUserInfo`: it talks to its vendor's service, not to a
//! model API, so no prompt reached a model and the exact resume stays
//! unproven.

use super::{agent_cli, resume_subcommand, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ResumeMode, VersionProbe};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.0.1790142911".into()) },
        resume_forms: vec![
            resume_subcommand(ResumeMode::Reference, &["threads", "continue", "{reference}"]),
            resume_subcommand(ResumeMode::ProviderSelection, &["last"]),
            resume_subcommand(ResumeMode::InteractivePicker, &["threads", "continue"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(
            "T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        )),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        // Its help lists both: the access token and the service's URL.
        reads_environment: strings(&["AMP_API_KEY", "AMP_URL"]),
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        // Published on the npm registry (`adapters/evidence/amp.json` names the same package).
        npm_package: Some("@ampcode/cli".into()),
        ..agent_cli("amp", "Amp", &["amp"], Evidence::CapturedHelp { file: "amp.json".into() })
    }
}
