//! Links the `panehost` executable as position-dependent (`-no-pie`).
//!
//! Every keeper is this same executable, and a host may run dozens of
//! them. In a position-independent executable the loader rewrites every
//! pointer in the program's read-only tables at start (about 390 KiB of
//! them here), which makes each of those pages a private copy in every
//! process: an idle keeper then holds about 530 KiB of its own memory
//! instead of about 135 KiB. Linked position-dependent, the tables are
//! final on disk and stay shared. The price is that the executable's own
//! code and data sit at fixed addresses (shared libraries, the stack and
//! the heap are still placed at random); docs/SECURITY.md says so.

fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
