//! The open vocabularies: wire fields that travel as strings but take their
//! values from a known list, which a newer host may extend.
//!
//! Each vocabulary's known values are one constant list of this crate (the
//! host sends those constants and nothing else), and the JSON Schema names
//! each vocabulary under `$defs` with its values, in a shape that still
//! accepts a value a newer host adds:
//!
//! ```json
//! "ErrorCode": {
//!   "description": "...",
//!   "x-open-vocabulary": true,
//!   "anyOf": [
//!     { "type": "string", "enum": ["PROTOCOL_MISMATCH", "..."] },
//!     { "type": "string" }
//!   ]
//! }
//! ```
//!
//! A field of the vocabulary refers to it (`"$ref": "#/$defs/ErrorCode"`).
//! A client generates a literal union or an enum of the known values with
//! an open fallback from it; a client meeting a value it does not know
//! treats it as the vocabulary's description says (an unknown error code
//! as a generic failure, an unknown activity as `unknown`).

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use std::borrow::Cow;

/// One open vocabulary: its name under the schema's `$defs`, what it is,
/// and its known values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vocabulary {
    /// The definition's name, such as `ErrorCode`.
    pub name: &'static str,
    /// What the values say, and what to do with one a client does not know.
    pub description: &'static str,
    /// The known values, in the order the crate declares them.
    pub values: &'static [&'static str],
}

impl Vocabulary {
    /// The definition under `$defs` that describes this vocabulary.
    pub fn schema(&self) -> Schema {
        json_schema!({
            "description": self.description,
            "x-open-vocabulary": true,
            "anyOf": [
                { "type": "string", "enum": self.values },
                { "type": "string" },
            ],
        })
    }

    /// Whether `value` is one of the known values.
    pub fn knows(&self, value: &str) -> bool {
        self.values.contains(&value)
    }
}

macro_rules! vocabularies {
    ($($(#[$doc:meta])* $marker:ident = $name:literal, $values:expr, $description:literal;)*) => {
        $(
            $(#[$doc])*
            #[derive(Debug)]
            pub(crate) struct $marker;

            impl JsonSchema for $marker {
                fn schema_name() -> Cow<'static, str> {
                    Cow::Borrowed($name)
                }

                fn schema_id() -> Cow<'static, str> {
                    Cow::Borrowed(concat!("panehost_ipc::vocabulary::", $name))
                }

                fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
                    Vocabulary { name: $name, description: $description, values: $values }.schema()
                }
            }
        )*

        /// Every open vocabulary of the protocol, by its `$defs` name.
        pub const ALL: &[Vocabulary] = &[
            $(Vocabulary { name: $name, description: $description, values: $values },)*
        ];
    };
}

vocabularies! {
    /// `ErrorBody.code` and a refused handshake's `code`.
    ErrorCodeSchema = "ErrorCode", crate::error::ErrorCode::NAMES,
        "An error code (PROTOCOL.md section 10). A client treats a code it does not know as a generic failure \
         and shows the message.";
    /// `ErrorBody.limitation` and `RuntimeInfo.limitations`.
    LimitationCodeSchema = "LimitationCode", crate::limitation::ALL,
        "A limitation code: what a runtime declares it cannot do (PROTOCOL.md section 10). A client treats a code \
         it does not know as a limitation it cannot explain.";
    /// `PaneSummary.activity` and `pane_activity`'s `activity`.
    ActivitySchema = "Activity", crate::turn::activity::ALL,
        "What a pane's agent is doing, as far as the host can tell. A client treats a value it does not know as \
         `unknown`.";
    /// `PaneSummary.completion` and `RuntimeInfo.completion`.
    CompletionSourceSchema = "CompletionSource", crate::turn::completion::ALL,
        "How the end of a turn is observed for a pane or a runtime. A client treats a value it does not know as \
         a signal it cannot rely on.";
    /// The `source` of turn events and of `TurnReport`.
    TurnSourceSchema = "TurnSource", crate::turn::source::ALL,
        "Where a turn signal came from. A client treats a value it does not know as a signal of unknown \
         reliability.";
    /// `PaneSummary.restored_by`.
    RestoredBySchema = "RestoredBy", crate::pane::restored_by::ALL,
        "How a pane came to this host: by a start, or how a host restart brought it back.";
    /// `ended`'s `reason`.
    EndReasonSchema = "EndReason", crate::event::end_reason::ALL,
        "Why a subscription ended.";
    /// `TerminalRelease.reason`.
    ReleaseReasonSchema = "ReleaseReason", crate::terminal::release_reason::ALL,
        "Why the host stopped using the client's terminal.";
    /// `RuntimeInfo.readiness`.
    ReadinessSchema = "Readiness", crate::runtime::readiness::ALL,
        "Whether a runtime is ready for work. A client treats a value it does not know as `not_ready`.";
    /// `RuntimeInfo.readiness_gate`.
    ReadinessGateSchema = "ReadinessGate", crate::runtime::readiness_gate::ALL,
        "The readiness gate that stops or reduces a runtime.";
    /// `RuntimeInfo.sign_in`.
    SignInSchema = "SignIn", crate::runtime::sign_in::ALL,
        "What the host can read of a runtime's sign-in.";
    /// `RuntimeInfo.login`.
    LoginFormSchema = "LoginForm", crate::runtime::login_form::ALL,
        "How a user signs in to a runtime's provider.";
    /// `RuntimeInfo.evidence`.
    EvidenceSchema = "Evidence", crate::runtime::evidence::ALL,
        "Where a runtime adapter's flags come from.";
    /// `RuntimeInfo.floor_status`.
    FloorStatusSchema = "FloorStatus", crate::runtime::floor_status::ALL,
        "How a runtime's version stands against the oldest version its adapter's flags are known to hold for.";
    /// `RuntimeInfo.resume_modes`.
    ResumeModeSchema = "ResumeMode", crate::runtime::resume_mode::ALL,
        "A way a runtime resumes an earlier session natively.";
    /// `StartParams.permission_profile` and `RuntimeInfo.permission_profiles`.
    PermissionProfileSchema = "PermissionProfile", crate::runtime::permission_profile::ALL,
        "A permission profile a runtime enforces. The host refuses a start naming a profile it does not know.";
    /// `Usage.kind`.
    UsageKindSchema = "UsageKind", crate::turn::usage_kind::ALL,
        "How a turn's usage is known. A client treats a value it does not know as `unavailable`.";
    /// `InterruptReport.outcome`.
    InterruptOutcomeSchema = "InterruptOutcome", crate::response::interrupt_outcome::ALL,
        "What an interrupt achieved. A client treats a value it does not know as `unconfirmed`.";
    /// `InterruptStep.action`.
    InterruptActionSchema = "InterruptAction", crate::response::interrupt_action::ALL,
        "One step of an interrupt.";
    /// `PaneSweep.method`.
    SweepMethodSchema = "SweepMethod", crate::response::sweep_method::ALL,
        "How the processes a pane started were told from others.";
    /// `notify`'s `event`.
    NotifyEventSchema = "NotifyEvent", crate::request::notify_event::ALL,
        "A turn signal a pane's hook reports through `notify`. The host ignores an event it does not know.";
}

/// The vocabulary with this `$defs` name.
pub fn by_name(name: &str) -> Option<&'static Vocabulary> {
    ALL.iter().find(|vocabulary| vocabulary.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_and_values_are_unique_and_not_empty() {
        let names: BTreeSet<&str> = ALL.iter().map(|vocabulary| vocabulary.name).collect();
        assert_eq!(names.len(), ALL.len(), "two vocabularies share a name");
        for vocabulary in ALL {
            let values: BTreeSet<&str> = vocabulary.values.iter().copied().collect();
            assert!(!values.is_empty(), "{} has no values", vocabulary.name);
            assert_eq!(values.len(), vocabulary.values.len(), "{} repeats a value", vocabulary.name);
        }
        assert!(by_name("ErrorCode").unwrap().knows("BUSY"));
        assert!(!by_name("ErrorCode").unwrap().knows("busy"));
    }
}
