//! What the test binaries and the end-to-end tests share: a socket proxy
//! whose connections can be cut, and ending a child process by its pid.

pub mod child_process;
pub mod proxy;
