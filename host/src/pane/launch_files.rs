//! The files a launch plan asks for (the hooks of CLIs that read them only
//! from files), written before the spawn, in the host's hook directory.

use crate::store::private_dir::create_private_subdir;
use panehost_adapters::completion::LaunchFile;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Distinguishes the temporary files of concurrent writes.
static NEXT_TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// Writes each file whole: into a temporary file beside it (mode 0600,
/// its directories 0700), then renamed over it, so that a CLI starting in
/// another pane never reads half a file.
///
/// # Errors
/// Fails when a directory or file cannot be created or renamed.
pub(super) fn write(files: &[LaunchFile]) -> io::Result<()> {
    for file in files {
        let dir = file.path.parent().unwrap_or(Path::new("/"));
        create_private_subdir(dir)?;
        let name = file.path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let temporary =
            dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), NEXT_TEMPORARY.fetch_add(1, Ordering::Relaxed)));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)
            .and_then(|mut out| out.write_all(file.contents.as_bytes()))
            .and_then(|()| std::fs::rename(&temporary, &file.path));
        if let Err(err) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(io::Error::new(err.kind(), format!("writing {}: {err}", file.path.display())));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn files_are_written_private_and_replaced_whole() {
        let dir = std::env::temp_dir().join(format!("panehost-launch-files-{}", std::process::id()));
        let path = dir.join("plugin").join("hooks.json");
        write(&[LaunchFile { path: path.clone(), contents: "first".into() }]).unwrap();
        write(&[LaunchFile { path: path.clone(), contents: "second".into() }]).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1, "no temporary file is left");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
