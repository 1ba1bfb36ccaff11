//! Why a start request was refused.

use panehost_ipc::{ErrorBody, ErrorCode};

/// A start request the catalog refused, before anything was spawned.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    /// No runtime has this id.
    #[error("no runtime is called {0:?}; `panehost runtimes` lists those this host can start")]
    UnknownRuntime(String),
    /// The runtime's executable was not found.
    #[error("runtime {runtime} is not available: {reason}")]
    NotAvailable {
        /// The runtime id.
        runtime: String,
        /// What is missing.
        reason: String,
    },
    /// Policy does not allow this runtime.
    #[error("runtime {0} is not supported")]
    NotSupported(String),
    /// The runtime cannot do what was asked; the limitation says why.
    #[error("{message}")]
    Unsupported {
        /// The limitation code.
        limitation: &'static str,
        /// A sentence for people.
        message: String,
    },
    /// A field of the request is not acceptable.
    #[error("{0}")]
    InvalidArgument(String),
    /// The runtime needs no sign-in, so there is no login to run.
    #[error("runtime {0} needs no sign-in")]
    NoLogin(String),
    /// The executable is not the one that was identified.
    #[error("the executable of runtime {runtime} changed since it was identified: {detail}")]
    BinaryChanged {
        /// The runtime id.
        runtime: String,
        /// What differs.
        detail: String,
    },
}

impl AdmissionError {
    /// The structured error a client receives.
    pub fn to_error_body(&self) -> ErrorBody {
        let message = self.to_string();
        match self {
            AdmissionError::UnknownRuntime(_) => ErrorBody::new(ErrorCode::UnknownRuntime, message),
            AdmissionError::NotAvailable { .. } => ErrorBody::new(ErrorCode::RuntimeNotAvailable, message),
            AdmissionError::NotSupported(_) => ErrorBody::new(ErrorCode::RuntimeNotSupported, message),
            AdmissionError::Unsupported { limitation, .. } => ErrorBody::unsupported(limitation, message),
            AdmissionError::InvalidArgument(_) => ErrorBody::new(ErrorCode::InvalidArgument, message),
            AdmissionError::NoLogin(_) => ErrorBody::new(ErrorCode::LoginNotRequired, message),
            AdmissionError::BinaryChanged { .. } => ErrorBody::new(ErrorCode::BinaryChanged, message),
        }
    }
}
