//! The canary's sandbox: a candidate CLI, npm installing it, and the
//! package's install scripts run under bubblewrap (`bwrap`) with none of
//! the user's files.
//!
//! Each command gets new user, mount, pid, ipc and uts namespaces (and a
//! cgroup namespace where the kernel has one), and a new network namespace
//! unless it must reach the registry. Its filesystem is built from nothing,
//! on an empty root:
//!
//! - the system directories ([`SYSTEM_DIRS`]) read-only, a new `/proc` (of
//!   its own pid namespace: no other process is visible), a minimal `/dev`
//!   and a new, empty `/tmp`;
//! - the caller's home and the host's state directory ([`Sandbox::hidden`])
//!   replaced by empty read-only directories;
//! - what the command must read ([`Sandbox::read_only`], and the program's
//!   own package tree, or the Python virtual environment it is installed
//!   in with the interpreter that environment was made from) read-only, and
//!   the canary's scratch directories ([`Sandbox::writable`], and the
//!   command's scratch home) writable;
//! - nothing else; the root itself is read-only.
//!
//! The command has no capabilities, cannot make further user namespaces,
//! runs in a session of its own (so it cannot type into the caller's
//! terminal), and everything it starts is killed when it or bwrap ends.
//!
//! When bubblewrap is missing or the kernel refuses any of this, the command
//! does not run, and the caller is told why: a command is never run without
//! the sandbox instead.

use crate::resolve::resolve_executable;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where bubblewrap is looked for: fixed places, never a `PATH` (the
/// probes' `PATH` starts with the candidate's own directory).
pub const BWRAP_LOCATIONS: &[&str] = &["/usr/bin/bwrap", "/usr/local/bin/bwrap"];

/// The system directories a sandboxed command sees, read-only (those that
/// exist; one that is a link into another, as `/bin` to `usr/bin`, stays
/// that link).
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

/// The namespaces and limits of every sandboxed command.
const CONFINEMENT: &[&str] = &[
    "--unshare-user",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--unshare-cgroup-try",
    "--disable-userns",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
];

/// How the sandbox is made, as reports say it.
pub const SANDBOX_DESCRIPTION: &str = "bubblewrap: new user, mount, pid, ipc and uts namespaces, no capabilities; \
     an empty root with the system directories read-only, a new /proc and an empty /tmp, the home and state \
     directories replaced by empty read-only ones, and only the scratch directories writable";

/// Whether a sandboxed command may use the host's network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxNetwork {
    /// The host's network: the npm install, which must download the
    /// package (`/etc/resolv.conf` is followed where it links out of
    /// `/etc`).
    Shared,
    /// None: a new network namespace with only a loopback interface.
    Private,
}

/// What a sandboxed command may see of the filesystem, beyond the system
/// directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Its network.
    pub network: SandboxNetwork,
    /// Replaced by empty read-only directories, whatever else is shown:
    /// the caller's home and the host's state directory. Absolute paths;
    /// `/` is ignored (nothing of it is shown but what is listed).
    pub hidden: Vec<PathBuf>,
    /// Shown read-only where they are (absolute paths): a staged package.
    /// None may hold a hidden directory.
    pub read_only: Vec<PathBuf>,
    /// Shown writable where they are (absolute paths): the canary's
    /// scratch directories. None may hold a hidden directory.
    pub writable: Vec<PathBuf>,
}

/// What one sandboxed command sees, besides `/proc`, `/dev`, a new `/tmp`
/// and its scratch home.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxView {
    /// Replaced by empty read-only directories.
    pub hidden: Vec<PathBuf>,
    /// Shown read-only: the system directories, [`Sandbox::read_only`], the
    /// program's package tree (or its Python virtual environment and that
    /// environment's interpreter, or the program itself) and `node` when
    /// they lie elsewhere.
    pub read_only: Vec<PathBuf>,
    /// Shown writable.
    pub writable: Vec<PathBuf>,
    /// The path the program runs by inside: as given when the sandbox shows
    /// it there, else its canonical path.
    pub program: PathBuf,
}

/// A command prepared to run in the sandbox: bwrap, its arguments, and the
/// program with its own arguments. The caller sets its environment, working
/// directory and standard streams and runs it; then [`status`](Self::status)
/// tells whether the program ran.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// bwrap, ready to spawn.
    pub(crate) command: Command,
    /// What bwrap reports.
    pub(crate) status: SandboxStatus,
}

/// bwrap's status reports (`--json-status-fd`).
#[derive(Debug)]
pub(crate) struct SandboxStatus(UnixStream);

impl SandboxStatus {
    /// The program's exit status as bwrap reported it (a program killed by
    /// signal N is reported as 128+N, as a shell does), once bwrap has
    /// exited; `None` when the program never ran: the sandbox could not be
    /// made, or the program could not be executed in it (bwrap's standard
    /// error says which).
    pub(crate) fn exit_code(&self) -> Option<i32> {
        let mut reports = Vec::new();
        // bwrap has exited: what it wrote is there, and nothing else will be.
        if self.0.set_nonblocking(true).is_ok() {
            let _ = (&self.0).read_to_end(&mut reports);
        }
        // The last report is bwrap's after the program ended.
        String::from_utf8_lossy(&reports)
            .lines()
            .rev()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .find_map(|report| report.get("exit-code").and_then(serde_json::Value::as_i64))
            .and_then(|code| i32::try_from(code).ok())
    }
}

impl Sandbox {
    /// What a command running `program` (looking for `node` on
    /// `search_path`) would see.
    ///
    /// # Errors
    /// A path that is not absolute, or a shown directory that would show a
    /// hidden one.
    pub fn view(&self, program: &Path, search_path: Option<&str>) -> Result<SandboxView, String> {
        let listed = self.hidden.iter().chain(&self.read_only).chain(&self.writable);
        if let Some(relative) = listed.chain([&program.to_path_buf()]).find(|path| !path.is_absolute()) {
            return Err(format!("{} is not an absolute path", relative.display()));
        }
        let mut view = SandboxView {
            hidden: self.hidden.iter().filter(|dir| dir.parent().is_some()).cloned().collect(),
            read_only: self.read_only.clone(),
            writable: self.writable.clone(),
            program: program.to_path_buf(),
        };
        // The program: its package tree (what a launcher or a script needs
        // beside it), the virtual environment it is installed in with the
        // interpreter that environment runs (a program installed from PyPI),
        // or, outside both, the file itself.
        if let Ok(canonical) = std::fs::canonicalize(program) {
            if !view.shows(&canonical) {
                match outermost_node_modules(&canonical) {
                    Some(tree) => view.read_only.push(tree),
                    None => match PythonEnvironment::of(&canonical) {
                        Some(environment) => {
                            view.read_only.push(environment.dir);
                            for dir in environment.interpreter {
                                if !view.shows(&dir) {
                                    view.read_only.push(dir);
                                }
                            }
                        }
                        None => view.read_only.push(canonical.clone()),
                    },
                }
            }
            if !view.shows(program) {
                view.program = canonical;
            }
        }
        // `node`, which npm and most candidates run under, where it is
        // found on their PATH.
        if let Some(node) = resolve_executable("node", search_path, &[]).filter(|node| node.is_absolute()) {
            if let Ok(canonical) = std::fs::canonicalize(&node) {
                if !view.shows(&canonical) {
                    view.read_only.push(canonical);
                }
            }
            if !view.shows(&node) {
                view.read_only.push(node);
            }
        }
        if self.network == SandboxNetwork::Shared {
            // Name resolution, where /etc/resolv.conf links elsewhere
            // (systemd-resolved's stub file under /run).
            if let Ok(resolver) = std::fs::canonicalize("/etc/resolv.conf") {
                if !view.shows(&resolver) {
                    view.read_only.push(resolver);
                }
            }
        }
        view.check()?;
        let present: Vec<PathBuf> =
            SYSTEM_DIRS.iter().map(PathBuf::from).filter(|dir| dir.symlink_metadata().is_ok()).collect();
        view.read_only.splice(0..0, present);
        Ok(view)
    }

    /// `program args` prepared to run in the sandbox, with `home` (a
    /// scratch directory of its own) writable and its working directory.
    ///
    /// # Errors
    /// bubblewrap is not installed, the view is refused
    /// ([`view`](Self::view)), or the status channel cannot be made.
    pub(crate) fn prepare(
        &self,
        program: &Path,
        args: &[String],
        search_path: Option<&str>,
        home: &Path,
    ) -> Result<Prepared, String> {
        let bwrap = BWRAP_LOCATIONS.iter().map(Path::new).find(|path| path.is_file()).ok_or_else(|| {
            format!(
                "bubblewrap is not installed (no {}); on Debian: apt-get install bubblewrap",
                BWRAP_LOCATIONS.join(" or ")
            )
        })?;
        let view = self.view(program, search_path)?;
        let (status, writer) =
            UnixStream::pair().map_err(|err| format!("cannot make bwrap's status channel: {err}"))?;
        // Numbered 3 or above, so that setting up standard streams in the
        // child cannot take its number.
        let writer: OwnedFd = rustix::io::fcntl_dupfd_cloexec(&writer, 3)
            .map_err(|err| format!("cannot make bwrap's status channel: {err}"))?;
        let mut command = Command::new(bwrap);
        command
            .args(arguments(&view, self.network, home))
            .arg("--json-status-fd")
            .arg(writer.as_raw_fd().to_string())
            .arg("--")
            .arg(&view.program)
            .args(args);
        // Safety: the closure runs in the forked child before exec. It makes
        // one `fcntl` call (async-signal-safe) on a descriptor opened before
        // the fork, so that bwrap inherits it, and allocates nothing (an
        // error is a raw OS error, which needs no allocation).
        unsafe {
            command.pre_exec(move || {
                rustix::io::fcntl_setfd(&writer, rustix::io::FdFlags::empty()).map_err(std::io::Error::from)
            });
        }
        Ok(Prepared { command, status: SandboxStatus(status) })
    }
}

impl SandboxView {
    /// True when `path` is visible in the sandbox as it is: inside a shown
    /// directory, or inside a system directory and not a hidden one.
    fn shows(&self, path: &Path) -> bool {
        let hidden = self.hidden.iter().any(|dir| path.starts_with(dir));
        (SYSTEM_DIRS.iter().any(|dir| path.starts_with(dir)) && !hidden)
            || self.read_only.iter().chain(&self.writable).any(|dir| path.starts_with(dir))
    }

    /// Refuses a shown directory that would show a hidden one.
    fn check(&self) -> Result<(), String> {
        for shown in self.read_only.iter().chain(&self.writable) {
            for hidden in &self.hidden {
                let holds = hidden.starts_with(shown)
                    || matches!(
                        (std::fs::canonicalize(shown), std::fs::canonicalize(hidden)),
                        (Ok(shown), Ok(hidden)) if hidden.starts_with(&shown)
                    );
                if holds {
                    return Err(format!(
                        "{} cannot be shown: it holds {}, which a candidate must not see",
                        shown.display(),
                        hidden.display()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// bwrap's arguments for `view`, up to (not including) the status channel
/// and the program. Mounts are made in order: the system directories, the
/// new `/proc`, `/dev` and `/tmp`, the hidden directories, then the shown
/// ones parents first, then the hidden directories and the root are made
/// read-only.
fn arguments(view: &SandboxView, network: SandboxNetwork, home: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = CONFINEMENT.iter().map(OsString::from).collect();
    let mut push = |words: &[&OsStr]| args.extend(words.iter().map(|word| word.to_os_string()));
    let word = OsStr::new;
    if network == SandboxNetwork::Private {
        push(&[word("--unshare-net")]);
    }
    let system: Vec<&Path> = SYSTEM_DIRS.iter().map(Path::new).collect();
    for dir in view.read_only.iter().filter(|dir| system.contains(&dir.as_path())) {
        match std::fs::read_link(dir) {
            // A link to another system directory stays that link.
            Ok(target) if system.iter().any(|other| dir.parent().unwrap_or(dir).join(&target).starts_with(other)) => {
                push(&[word("--symlink"), target.as_os_str(), dir.as_os_str()])
            }
            _ => push(&[word("--ro-bind"), dir.as_os_str(), dir.as_os_str()]),
        }
    }
    push(&[word("--proc"), word("/proc"), word("--dev"), word("/dev"), word("--tmpfs"), word("/tmp")]);
    let mut hidden: Vec<&PathBuf> = view.hidden.iter().collect();
    hidden.sort_by_key(|dir| dir.components().count());
    hidden.dedup();
    let outermost: Vec<&PathBuf> = hidden
        .iter()
        // One inside another is hidden with it.
        .filter(|dir| !hidden.iter().any(|other| other != *dir && dir.starts_with(other)))
        // One inside a system directory is hidden where it exists (else
        // there is nothing to hide, and no directory can be made there).
        .filter(|dir| dir.exists() || !system.iter().any(|system| dir.starts_with(system)))
        .copied()
        .collect();
    for dir in &outermost {
        push(&[word("--tmpfs"), dir.as_os_str()]);
    }
    let shown_read_only = view.read_only.iter().filter(|dir| !system.contains(&dir.as_path()));
    let mut binds: Vec<(&str, &Path)> = view
        .writable
        .iter()
        .map(|dir| ("--bind", dir.as_path()))
        .chain([("--bind", home)])
        .chain(shown_read_only.map(|dir| ("--ro-bind", dir.as_path())))
        .collect();
    // Parents first, so that none covers what is shown inside it.
    binds.sort_by_key(|(_, dir)| dir.components().count());
    for (how, dir) in binds {
        push(&[word(how), dir.as_os_str(), dir.as_os_str()]);
    }
    for dir in &outermost {
        push(&[word("--remount-ro"), dir.as_os_str()]);
    }
    push(&[word("--remount-ro"), word("/"), word("--chdir"), home.as_os_str()]);
    args
}

/// The outermost `node_modules` directory holding `path`: a package and
/// every package it may load.
fn outermost_node_modules(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .filter(|dir| dir.file_name().is_some_and(|name| name == "node_modules"))
        .last()
        .map(Path::to_path_buf)
}

/// A Python virtual environment that holds a program (`ENV/bin/PROGRAM`,
/// beside `ENV/pyvenv.cfg`), and what of the interpreter it was made from
/// the program needs: the environment's `bin/python3` links to it, and its
/// standard library is beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PythonEnvironment {
    /// The environment (the directory holding `pyvenv.cfg`).
    dir: PathBuf,
    /// The interpreter's directory (`home =` in `pyvenv.cfg`) and, when that
    /// is a `bin` directory, the `lib` beside it (the standard library and a
    /// shared `libpython`); nothing when `home` holds no interpreter.
    interpreter: Vec<PathBuf>,
}

impl PythonEnvironment {
    /// The environment of `program` (a canonical path), if it is in one's
    /// `bin` directory.
    fn of(program: &Path) -> Option<PythonEnvironment> {
        let bin = program.parent().filter(|dir| dir.file_name().is_some_and(|name| name == "bin"))?;
        let dir = bin.parent().filter(|dir| dir.parent().is_some())?;
        let config = std::fs::read_to_string(dir.join("pyvenv.cfg")).ok()?;
        let home = config.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key.trim() == "home").then(|| PathBuf::from(value.trim()))
        });
        let interpreter = home
            .and_then(|home| std::fs::canonicalize(home).ok())
            // Only a directory that holds an interpreter, and never the root.
            .filter(|home| {
                home.parent().is_some() && ["python3", "python"].iter().any(|name| home.join(name).is_file())
            })
            .map(|home| {
                let lib = (home.file_name().is_some_and(|name| name == "bin"))
                    .then(|| home.parent().map(|prefix| prefix.join("lib")))
                    .flatten()
                    .filter(|lib| lib.parent().is_some_and(|prefix| prefix.parent().is_some()) && lib.is_dir());
                std::iter::once(home).chain(lib).collect()
            })
            .unwrap_or_default();
        Some(PythonEnvironment { dir: dir.to_path_buf(), interpreter })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[OsString]) -> Vec<String> {
        args.iter().map(|arg| arg.to_string_lossy().into_owned()).collect()
    }

    fn position(args: &[String], window: &[&str]) -> usize {
        args.windows(window.len())
            .position(|candidate| candidate.iter().zip(window).all(|(one, other)| one == other))
            .unwrap_or_else(|| panic!("{window:?} not in {args:?}"))
    }

    #[test]
    fn the_home_is_hidden_before_scratch_inside_it_is_shown_and_made_read_only_after() {
        let sandbox = Sandbox {
            network: SandboxNetwork::Private,
            hidden: vec!["/home/ann".into(), "/home/ann/.local/state/panehost".into(), "/".into()],
            read_only: vec!["/home/ann/.cache/panehost/canary/x/node_modules".into()],
            writable: vec!["/home/ann/.cache/panehost/canary/x".into()],
        };
        let view = sandbox.view(Path::new("/bin/sh"), Some("/usr/bin:/bin")).unwrap();
        assert_eq!(view.program, Path::new("/bin/sh"), "a system program runs where it is");
        let args = words(&arguments(&view, sandbox.network, Path::new("/tmp/panehost-probe-1")));
        assert!(args.contains(&"--unshare-net".to_owned()) && args.contains(&"--disable-userns".to_owned()));
        let hide = position(&args, &["--tmpfs", "/home/ann"]);
        let scratch = position(&args, &["--bind", "/home/ann/.cache/panehost/canary/x"]);
        let package = position(&args, &["--ro-bind", "/home/ann/.cache/panehost/canary/x/node_modules"]);
        let seal = position(&args, &["--remount-ro", "/home/ann"]);
        assert!(hide < scratch && scratch < package && package < seal, "{args:?}");
        assert!(position(&args, &["--remount-ro", "/"]) > seal);
        // The state directory inside the home is hidden with it; `/` is not a directory to hide.
        assert!(!args.iter().any(|arg| arg == "/home/ann/.local/state/panehost"), "{args:?}");
        assert_eq!(args.iter().filter(|arg| *arg == "--tmpfs").count(), 2, "/tmp and the home: {args:?}");
        assert!(position(&args, &["--ro-bind", "/usr", "/usr"]) < hide);
    }

    #[test]
    fn a_shown_directory_that_holds_a_hidden_one_is_refused() {
        let sandbox = Sandbox {
            network: SandboxNetwork::Shared,
            hidden: vec!["/home/ann".into()],
            read_only: vec!["/home".into()],
            writable: Vec::new(),
        };
        let refused = sandbox.view(Path::new("/bin/sh"), None).unwrap_err();
        assert!(refused.contains("/home cannot be shown: it holds /home/ann"), "{refused}");
        let relative = Sandbox {
            network: SandboxNetwork::Shared,
            hidden: vec!["home".into()],
            read_only: vec![],
            writable: vec![],
        };
        assert!(relative.view(Path::new("/bin/sh"), None).unwrap_err().contains("not an absolute path"));
    }

    #[test]
    fn a_program_elsewhere_is_shown_with_its_package_tree() {
        let dir = std::env::temp_dir().join(format!("panehost-sandbox-{}", std::process::id()));
        let package = dir.join("prefix/node_modules/@scope/cli");
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::create_dir_all(dir.join("prefix/node_modules/.bin")).unwrap();
        std::fs::write(package.join("bin/cli.js"), "").unwrap();
        let link = dir.join("prefix/node_modules/.bin/cli");
        std::os::unix::fs::symlink("../@scope/cli/bin/cli.js", &link).unwrap();
        let outside = dir.join("bin-cli");
        std::os::unix::fs::symlink(&link, &outside).unwrap();
        let sandbox = Sandbox { network: SandboxNetwork::Private, hidden: vec![], read_only: vec![], writable: vec![] };
        let tree = std::fs::canonicalize(dir.join("prefix/node_modules")).unwrap();
        let view = sandbox.view(&link, None).unwrap();
        assert!(view.read_only.contains(&tree), "{view:?}");
        assert_eq!(view.program, link, "inside its tree, it runs as given");
        let view = sandbox.view(&outside, None).unwrap();
        assert!(view.read_only.contains(&tree), "{view:?}");
        assert_eq!(view.program, std::fs::canonicalize(&link).unwrap(), "a link outside runs by its target");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A virtual environment in `base/env` made from an interpreter in
    /// `base/python` (a shell script standing for it, which reads its
    /// standard library and the environment's packages), with a program
    /// `base/env/bin/tool` run by the environment's `python3`; a secret
    /// beside the interpreter's `bin` and `lib`, and one in `base`.
    fn virtual_environment(base: &Path) -> PathBuf {
        let python = base.join("python");
        for dir in ["bin", "lib/python3.12", "include"] {
            std::fs::create_dir_all(python.join(dir)).unwrap();
        }
        std::fs::create_dir_all(base.join("env/bin")).unwrap();
        std::fs::create_dir_all(base.join("env/lib/python3.12/site-packages")).unwrap();
        std::fs::write(python.join("lib/python3.12/os.py"), "standard library\n").unwrap();
        std::fs::write(base.join("env/lib/python3.12/site-packages/tool.py"), "site packages\n").unwrap();
        std::fs::write(python.join("include/secret"), "s3cret beside\n").unwrap();
        std::fs::write(base.join("secret"), "s3cret above\n").unwrap();
        let interpreter = python.join("bin/python3");
        let script = format!(
            "#!/bin/sh\ncat {lib}/os.py {env}/lib/python3.12/site-packages/tool.py\ncat {python}/include/secret {base}/secret\n",
            lib = python.join("lib/python3.12").display(),
            env = base.join("env").display(),
            python = python.display(),
            base = base.display(),
        );
        std::fs::write(&interpreter, script).unwrap();
        std::fs::set_permissions(&interpreter, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&interpreter, base.join("env/bin/python3")).unwrap();
        std::fs::write(
            base.join("env/pyvenv.cfg"),
            format!(
                "home = {}\ninclude-system-site-packages = false\nversion = 3.12.1\n",
                python.join("bin").display()
            ),
        )
        .unwrap();
        let tool = base.join("env/bin/tool");
        std::fs::write(&tool, format!("#!{}\n", base.join("env/bin/python3").display())).unwrap();
        std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        tool
    }

    fn shown_beyond_the_system(view: &SandboxView) -> Vec<PathBuf> {
        view.read_only
            .iter()
            .filter(|dir| !SYSTEM_DIRS.iter().any(|system| Path::new(system) == *dir))
            .cloned()
            .collect()
    }

    #[test]
    fn a_program_in_a_virtual_environment_is_shown_with_it_and_its_interpreter_only() {
        let dir = std::env::temp_dir().join(format!("panehost-sandbox-venv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = std::fs::canonicalize(&dir).unwrap();
        let tool = virtual_environment(&base);
        let sandbox = Sandbox {
            network: SandboxNetwork::Private,
            hidden: vec![base.clone()],
            read_only: vec![],
            writable: vec![],
        };
        let view = sandbox.view(&tool, None).unwrap();
        assert_eq!(
            shown_beyond_the_system(&view),
            [base.join("env"), base.join("python/bin"), base.join("python/lib")],
            "the environment, the interpreter's directory and its lib; not the rest of its installation"
        );
        assert_eq!(view.program, tool);

        // A `home` that holds no interpreter shows nothing more than the environment.
        std::fs::write(base.join("env/pyvenv.cfg"), format!("home = {}\n", base.join("python/include").display()))
            .unwrap();
        assert_eq!(shown_beyond_the_system(&sandbox.view(&tool, None).unwrap()), [base.join("env")]);
        // Outside a virtual environment (no pyvenv.cfg), and outside a package tree, the file alone.
        std::fs::remove_file(base.join("env/pyvenv.cfg")).unwrap();
        assert_eq!(shown_beyond_the_system(&sandbox.view(&tool, None).unwrap()), std::slice::from_ref(&tool));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_program_in_a_virtual_environment_runs_with_its_interpreter_and_sees_nothing_else_of_a_hidden_directory() {
        let dir = std::env::temp_dir().join(format!("panehost-sandbox-venv-run-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let base = std::fs::canonicalize(&dir).unwrap();
        let tool = virtual_environment(&base);
        // As the user's home is: hidden, though the environment and the interpreter are in it.
        let sandbox = Sandbox {
            network: SandboxNetwork::Private,
            hidden: vec![base.clone()],
            read_only: vec![],
            writable: vec![],
        };
        let request = crate::probe::ProbeRequest {
            program: &tool,
            args: &[],
            search_path: None,
            extra_env: &[],
            timeout: std::time::Duration::from_secs(10),
            sandbox: Some(&sandbox),
        };
        match crate::probe::run_probe_capturing(&request) {
            Ok(run) => {
                assert_eq!(run.stdout, "standard library\nsite packages\n", "{run:?}");
                assert!(!run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"), "{run:?}");
                assert!(run.stderr.contains("No such file or directory"), "{run:?}");
            }
            // Where the sandbox cannot be made, the probe never runs without it.
            Err(crate::probe::ProbeError::SandboxRefused(reason)) => eprintln!("skipped: {reason}"),
            Err(other) => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
