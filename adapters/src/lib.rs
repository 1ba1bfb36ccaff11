//! Runtime descriptors: what each CLI panehost can start is, and how to
//! start it.
//!
//! The host never builds argv or an environment itself. It hands a client's
//! [`StartParams`](panehost_ipc::StartParams) to the [`Catalog`], which finds
//! the runtime's [`Descriptor`], checks the request against it (admission),
//! and returns a [`LaunchPlan`]: program, arguments, working directory and
//! an environment built from scratch. Adding a runtime is adding a
//! descriptor; the host has no branch for any runtime.

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod admission;
pub mod canary;
pub mod catalog;
pub mod completion;
pub mod config;
pub mod contract;
pub mod descriptor;
pub mod detection;
pub mod environment;
pub mod identity;
pub mod installation;
pub mod launch_plan;
pub mod launcher;
pub mod notify_payload;
pub mod probe;
pub mod readiness;
pub mod receipt;
pub mod reference_pattern;
pub mod relied_flags;
pub mod resolve;
pub mod runtimes;
pub mod sandbox;
pub mod session_store;
pub mod shell_integration;
pub mod sign_in;
pub mod system_defaults;
pub mod version;

pub use admission::AdmissionError;
pub use catalog::Catalog;
pub use descriptor::{
    CommandPolicy, CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ProfileForm,
    ResumeForm, ResumeMode,
};
pub use environment::HostEnvironment;
pub use launch_plan::{LaunchPlan, LaunchPurpose};
