//! What the test binaries and the end-to-end tests share: a socket proxy
//! whose connections can be cut, ending a child process by its pid, what
//! `/proc` says about a process, and a seeded random number generator.

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod child_process;
pub mod procfs;
pub mod proxy;
pub mod rng;
