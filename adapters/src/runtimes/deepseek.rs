//! `deepseek`: Reasonix (DeepSeek). It installs from the npm registry
//! (`reasonix` 1.38.11, with its binary in `@reasonix/cli-linux-x64`), and
//! run by hand against the fixture it answered, stopped on Esc and resumed
//! by id (`-r <id>`) and as the latest (`-c`): docs/ADAPTERS.md. Its help is
//! not recorded in `adapters/evidence/` yet and the live program does not
//! run it, so nothing of that is declared: no resume form until the
//! evidence is there.

use super::documented_only;
use crate::descriptor::Descriptor;

pub(super) fn descriptor() -> Descriptor {
    documented_only("deepseek", "Reasonix (DeepSeek)", "reasonix")
}
