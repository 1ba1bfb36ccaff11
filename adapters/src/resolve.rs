//! Finding a runtime's executable.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Resolves an executable name: a name containing `/` is taken as a path;
/// otherwise each directory of `search_path` (colon-separated) is tried in
/// order, then `known_paths`. Only regular files with an execute bit count.
pub fn resolve_executable(name: &str, search_path: Option<&str>, known_paths: &[&str]) -> Option<PathBuf> {
    if name.contains('/') {
        return is_executable(Path::new(name)).then(|| PathBuf::from(name));
    }
    let from_path = search_path
        .into_iter()
        .flat_map(|path| path.split(':'))
        .filter(|dir| !dir.is_empty())
        .map(|dir| Path::new(dir).join(name));
    let known = known_paths.iter().map(PathBuf::from);
    from_path.chain(known).find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).map(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0).unwrap_or(false)
}
