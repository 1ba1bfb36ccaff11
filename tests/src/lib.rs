//! What the test binaries and the end-to-end tests share: a socket proxy
//! whose connections can be cut, ending a child process by its pid, and
//! what `/proc` says about a process.

pub mod child_process;
pub mod procfs;
pub mod proxy;
