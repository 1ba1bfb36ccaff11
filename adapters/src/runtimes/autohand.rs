//! `autohand`: Autohand Code. It installs from no registry this machine reaches
//! (docs/ADAPTERS.md says what was looked up); nothing about its flags is
//! checked, so no resume form is declared until there is evidence of one.

use super::documented_only;
use crate::descriptor::Descriptor;

pub(super) fn descriptor() -> Descriptor {
    documented_only("autohand", "Autohand Code", "autohand")
}
