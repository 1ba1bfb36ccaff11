//! `omp`: OMP. It does not install here; nothing about its flags is
//! checked, so no resume form is declared until there is evidence of one.

use super::documented_only;
use crate::descriptor::Descriptor;

pub(super) fn descriptor() -> Descriptor {
    documented_only("omp", "OMP", "omp")
}
