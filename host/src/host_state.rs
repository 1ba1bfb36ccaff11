//! What every connection of a host shares.

use crate::pane::PaneLimits;
use crate::registry::Registry;
use panehost_adapters::Catalog;

/// The host's shared state.
#[derive(Debug)]
pub struct HostState {
    /// Every pane.
    pub registry: Registry,
    /// The runtimes it can start.
    pub catalog: Catalog,
    /// Buffer sizes of new panes.
    pub pane_limits: PaneLimits,
}
