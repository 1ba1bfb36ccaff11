//! The limitation vocabulary: what a runtime declares it cannot do.
//!
//! Limitation codes travel as strings, like error codes. An operation that a
//! runtime cannot perform answers `OPERATION_UNSUPPORTED` naming one of
//! these, rather than falling back to something that only looks equivalent.

/// Starting needs a model named explicitly; the CLI has no usable default.
pub const START_REQUIRES_RESOLVED_MODEL: &str = "START_REQUIRES_RESOLVED_MODEL";
/// The CLI cannot resume an earlier session at all.
pub const NATIVE_RESUME_UNSUPPORTED: &str = "NATIVE_RESUME_UNSUPPORTED";
/// The CLI can only continue "the latest" session, not an exact one.
pub const PROVIDER_SELECTION_ONLY: &str = "PROVIDER_SELECTION_ONLY";
/// The CLI's resume opens an interactive picker.
pub const PROVIDER_SELECTION_INTERACTIVE_PICKER: &str = "PROVIDER_SELECTION_INTERACTIVE_PICKER";
/// Resume by exact reference is declared but not yet proven live.
pub const REFERENCE_PENDING_LIVE_PROOF: &str = "REFERENCE_PENDING_LIVE_PROOF";
/// The CLI cannot pick its latest session by itself; resume it by exact
/// reference instead.
pub const PROVIDER_SELECTION_UNSUPPORTED: &str = "PROVIDER_SELECTION_UNSUPPORTED";
/// The reference is steered by a wrapper rather than the CLI itself.
pub const REFERENCE_STEERED_BY_WRAPPER: &str = "REFERENCE_STEERED_BY_WRAPPER";
/// After host loss the pane restarts fresh rather than resuming.
pub const HOST_LOSS_RESTARTS_FRESH: &str = "HOST_LOSS_RESTARTS_FRESH";
/// The host cannot observe when a turn completes.
pub const COMPLETION_UNOBSERVED: &str = "COMPLETION_UNOBSERVED";
/// Signing in happens outside the terminal.
pub const LOGIN_NOT_IN_TERMINAL: &str = "LOGIN_NOT_IN_TERMINAL";
/// The runtime cannot enforce at least one permission profile; a start
/// asking for one it cannot enforce is refused unless the client accepts a
/// weaker boundary.
pub const PERMISSION_PROFILE_UNENFORCED: &str = "PERMISSION_PROFILE_UNENFORCED";
/// The interrupt keys stop the CLI's answer on the screen, but not its
/// request to the model: the model's server streams on (and is paid for)
/// until it ends the answer.
pub const INTERRUPT_KEEPS_REQUEST: &str = "INTERRUPT_KEEPS_REQUEST";
/// The CLI has no one-shot mode to take a completion receipt with, so it
/// is never ready for work that requires one.
pub const RECEIPT_UNAVAILABLE: &str = "RECEIPT_UNAVAILABLE";
/// The installed version is one the runtime's adapter refuses (a range it
/// names, with a reason: a release known to do harm when started, such as
/// running a remote installer). Unlike the codes above it is not declared
/// by the runtime but found by detection: `runtimes` shows it in
/// `version_refused`, readiness is `not_ready` at the `version` gate, and
/// a start is refused with `OPERATION_UNSUPPORTED` naming it unless the
/// client sets `allow_refused_version`.
pub const VERSION_REFUSED: &str = "VERSION_REFUSED";

/// Every limitation code this crate knows: the known values of the
/// `LimitationCode` vocabulary ([`crate::vocabulary`]).
pub const ALL: &[&str] = &[
    START_REQUIRES_RESOLVED_MODEL,
    NATIVE_RESUME_UNSUPPORTED,
    PROVIDER_SELECTION_ONLY,
    PROVIDER_SELECTION_INTERACTIVE_PICKER,
    PROVIDER_SELECTION_UNSUPPORTED,
    REFERENCE_PENDING_LIVE_PROOF,
    REFERENCE_STEERED_BY_WRAPPER,
    HOST_LOSS_RESTARTS_FRESH,
    COMPLETION_UNOBSERVED,
    LOGIN_NOT_IN_TERMINAL,
    PERMISSION_PROFILE_UNENFORCED,
    RECEIPT_UNAVAILABLE,
    INTERRUPT_KEEPS_REQUEST,
    VERSION_REFUSED,
];
