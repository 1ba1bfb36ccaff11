//! [`RemoteTarget`]: which machine, which user, which programs; every value
//! checked before it reaches a command line.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The ssh client run when none is named.
pub const DEFAULT_SSH_PROGRAM: &str = "ssh";

/// The program run on the other machine when none is named.
pub const DEFAULT_REMOTE_PROGRAM: &str = "panehost";

/// How long ssh has to sign in and the other machine's `panehost up` to
/// answer (starting a host there when none answers), by default.
pub const DEFAULT_REMOTE_READY_TIMEOUT: Duration = Duration::from_secs(20);

/// The longest destination accepted: a user name, `@`, a DNS name of at
/// most 253 bytes and a port, with room for `ssh://`.
pub const MAX_DESTINATION_LEN: usize = 320;

/// The longest program path accepted (for ssh, and on the other machine).
pub const MAX_PROGRAM_LEN: usize = 1024;

/// The longest socket path a Unix-domain socket can have, without the
/// terminating NUL of `sun_path`.
pub const MAX_SOCKET_PATH_LEN: usize = 107;

/// A value that cannot be used for a remote target, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RemoteTargetError(pub String);

/// Where a remote host is and how to reach it: an ssh destination, the
/// ssh client to run, and the `panehost` program on the other machine.
///
/// ```
/// # fn demo() -> Result<(), panehost_client::RemoteTargetError> {
/// use panehost_client::RemoteTarget;
/// let target = RemoteTarget::new("ada@build-3")?.remote_program("~/.cargo/bin/panehost")?;
/// assert_eq!(target.destination(), "ada@build-3");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteTarget {
    destination: String,
    ssh_program: PathBuf,
    ssh_config: Option<PathBuf>,
    remote_program: String,
    remote_socket: Option<String>,
    local_dir: Option<PathBuf>,
    ready_timeout: Duration,
}

impl RemoteTarget {
    /// A target for `destination`: `[user@]host` (a host name, an address
    /// or a `Host` alias of the ssh configuration) or
    /// `ssh://[user@]host[:port]`.
    ///
    /// # Errors
    /// When the destination is empty, too long, starts with `-` (an ssh
    /// option) or holds characters a host or user name cannot have.
    pub fn new(destination: &str) -> Result<Self, RemoteTargetError> {
        check_destination(destination).map_err(|problem| {
            RemoteTargetError(format!("the remote destination {:?} {problem}", Shown(destination)))
        })?;
        Ok(RemoteTarget {
            destination: destination.to_owned(),
            ssh_program: PathBuf::from(DEFAULT_SSH_PROGRAM),
            ssh_config: None,
            remote_program: DEFAULT_REMOTE_PROGRAM.to_owned(),
            remote_socket: None,
            local_dir: None,
            ready_timeout: DEFAULT_REMOTE_READY_TIMEOUT,
        })
    }

    /// Runs this ssh client (a name looked up on `PATH`, or a path)
    /// instead of `ssh`.
    ///
    /// # Errors
    /// An empty or overlong value, or one with control characters.
    pub fn ssh_program(mut self, program: impl Into<PathBuf>) -> Result<Self, RemoteTargetError> {
        let program = program.into();
        check_local_path("the ssh program", &program)?;
        self.ssh_program = program;
        Ok(self)
    }

    /// Has ssh read this configuration file (`ssh -F`) instead of the
    /// user's `~/.ssh/config`.
    ///
    /// # Errors
    /// An empty or overlong value, or one with control characters.
    pub fn ssh_config(mut self, file: impl Into<PathBuf>) -> Result<Self, RemoteTargetError> {
        let file = file.into();
        check_local_path("the ssh configuration file", &file)?;
        self.ssh_config = Some(file);
        Ok(self)
    }

    /// Runs this program on the other machine instead of `panehost`: a
    /// name its `PATH` finds, an absolute path, or a path below its home
    /// (`~/...`). A non-interactive ssh session's `PATH` is short (often
    /// `/usr/bin:/bin`), so a `panehost` installed by `cargo install`
    /// needs `~/.cargo/bin/panehost`.
    ///
    /// # Errors
    /// When the value is empty, too long, starts with `-`, or holds a
    /// character other than letters, digits and `_ . / + -` (the remote
    /// shell reads it; nothing in it may need quoting).
    pub fn remote_program(mut self, program: &str) -> Result<Self, RemoteTargetError> {
        check_remote_program(program)
            .map_err(|problem| RemoteTargetError(format!("the remote program {:?} {problem}", Shown(program))))?;
        self.remote_program = program.to_owned();
        Ok(self)
    }

    /// Uses the host at this socket path on the other machine instead of
    /// the one its own defaults name.
    ///
    /// # Errors
    /// As for every socket path that crosses ssh: see
    /// [`check_socket_path`].
    pub fn remote_socket(mut self, path: &str) -> Result<Self, RemoteTargetError> {
        check_socket_path(path)
            .map_err(|problem| RemoteTargetError(format!("the remote socket {:?} {problem}", Shown(path))))?;
        self.remote_socket = Some(path.to_owned());
        Ok(self)
    }

    /// Makes the local end of each forward in a new private directory
    /// inside `dir` (created with mode 0700 when missing; refused when it is
    /// not private). By default: the directory of this user's own socket
    /// (`$XDG_RUNTIME_DIR/panehost`, else `<tmp>/panehost-<uid>`).
    pub fn local_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.local_dir = Some(dir.into());
        self
    }

    /// How long ssh has to sign in and the other side to answer.
    pub fn ready_timeout(mut self, timeout: Duration) -> Self {
        self.ready_timeout = timeout;
        self
    }

    /// The ssh destination.
    pub fn destination(&self) -> &str {
        &self.destination
    }

    /// The ssh client to run.
    pub fn ssh_program_path(&self) -> &Path {
        &self.ssh_program
    }

    /// The ssh configuration file, when one was named.
    pub fn ssh_config_file(&self) -> Option<&Path> {
        self.ssh_config.as_deref()
    }

    /// The program run on the other machine.
    pub fn remote_program_name(&self) -> &str {
        &self.remote_program
    }

    /// The socket on the other machine, when one was named.
    pub fn remote_socket_path(&self) -> Option<&str> {
        self.remote_socket.as_deref()
    }

    /// The directory that holds the local ends of forwards, when one was
    /// named.
    pub fn local_dir_path(&self) -> Option<&Path> {
        self.local_dir.as_deref()
    }

    /// How long ssh has to sign in and the other side to answer.
    pub fn ready_timeout_value(&self) -> Duration {
        self.ready_timeout
    }
}

/// Shows a value with its control characters escaped, shortened.
pub(crate) struct Shown<'a>(pub(crate) &'a str);

impl fmt::Debug for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown: String = self.0.chars().take(80).collect();
        if shown.len() < self.0.len() {
            shown.push_str("...");
        }
        fmt::Debug::fmt(&shown, f)
    }
}

/// A user name: letters, digits, `_ . -`, not starting with `-`.
fn check_user(user: &str) -> Result<(), String> {
    if user.is_empty() || user.len() > 64 {
        return Err("has a user name that is empty or longer than 64 bytes".to_owned());
    }
    if user.starts_with('-') || !user.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) {
        return Err("has a user name with a character other than letters, digits and `_ . -`".to_owned());
    }
    Ok(())
}

/// A host name, an IPv4 address or a `Host` alias: letters, digits,
/// `_ . -`, starting with a letter or digit.
fn check_host_name(host: &str) -> Result<(), String> {
    if host.is_empty() || host.len() > 253 {
        return Err("has a host name that is empty or longer than 253 bytes".to_owned());
    }
    if !host.starts_with(|c: char| c.is_ascii_alphanumeric())
        || !host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Err("has a host name with a character other than letters, digits and `_ . -` \
                    (or one that does not start with a letter or digit)"
            .to_owned());
    }
    Ok(())
}

/// An IPv6 address as ssh takes it: hex digits and colons, with a `%zone`.
fn check_ipv6(address: &str) -> Result<(), String> {
    let (address, zone) = address.split_once('%').unwrap_or((address, ""));
    let valid = address.contains(':')
        && address.len() <= 45
        && address.chars().all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'))
        && zone.len() <= 16
        && zone.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if valid {
        Ok(())
    } else {
        Err("has an IPv6 address that is not one".to_owned())
    }
}

/// `[user@]host` or `ssh://[user@]host[:port]`.
pub(crate) fn check_destination(destination: &str) -> Result<(), String> {
    if destination.is_empty() {
        return Err("is empty".to_owned());
    }
    if destination.len() > MAX_DESTINATION_LEN {
        return Err(format!("is longer than {MAX_DESTINATION_LEN} bytes"));
    }
    if destination.starts_with('-') {
        return Err("starts with `-`, which ssh would read as an option".to_owned());
    }
    if let Some(rest) = destination.strip_prefix("ssh://") {
        let (user, host_port) = match rest.rsplit_once('@') {
            Some((user, host_port)) => (Some(user), host_port),
            None => (None, rest),
        };
        if let Some(user) = user {
            check_user(user)?;
        }
        let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
            let Some((address, after)) = bracketed.split_once(']') else {
                return Err("has a `[` without its `]`".to_owned());
            };
            check_ipv6(address)?;
            match after {
                "" => (address, None),
                after => match after.strip_prefix(':') {
                    Some(port) => (address, Some(port)),
                    None => return Err("has something other than `:port` after its `]`".to_owned()),
                },
            }
        } else {
            match host_port.split_once(':') {
                Some((host, port)) => {
                    check_host_name(host)?;
                    (host, Some(port))
                }
                None => {
                    check_host_name(host_port)?;
                    (host_port, None)
                }
            }
        };
        let _ = host;
        if let Some(port) = port {
            let valid = !port.is_empty()
                && port.len() <= 5
                && port.chars().all(|c| c.is_ascii_digit())
                && port.parse::<u32>().is_ok_and(|port| (1..=65535).contains(&port));
            if !valid {
                return Err("has a port that is not a number from 1 to 65535".to_owned());
            }
        }
        return Ok(());
    }
    if destination.contains("://") {
        return Err("names a scheme other than ssh://".to_owned());
    }
    let (user, host) = match destination.rsplit_once('@') {
        Some((user, host)) => (Some(user), host),
        None => (None, destination),
    };
    if let Some(user) = user {
        check_user(user)?;
    }
    if host.contains(':') {
        check_ipv6(host)
    } else {
        check_host_name(host)
    }
}

/// A program the remote shell runs: no quoting needed in any shell.
pub(crate) fn check_remote_program(program: &str) -> Result<(), String> {
    if program.is_empty() {
        return Err("is empty".to_owned());
    }
    if program.len() > MAX_PROGRAM_LEN {
        return Err(format!("is longer than {MAX_PROGRAM_LEN} bytes"));
    }
    if program.starts_with('-') {
        return Err("starts with `-`".to_owned());
    }
    let body = program.strip_prefix("~/").unwrap_or(program);
    if !body.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '+' | '-')) {
        return Err("holds a character other than letters, digits and `_ . / + -` (and a leading `~/`)".to_owned());
    }
    Ok(())
}

/// A socket path that crosses ssh (`-L local:remote`): absolute, short
/// enough for a Unix-domain socket, and free of what ssh or a shell would
/// read as something else (`:` separates the two paths, `%` and `$` are
/// expanded, whitespace splits words).
///
/// # Errors
/// Why the path cannot be used.
pub fn check_socket_path(path: &str) -> Result<(), String> {
    if !path.starts_with('/') {
        return Err("is not an absolute path".to_owned());
    }
    if path.len() > MAX_SOCKET_PATH_LEN {
        return Err(format!("is longer than {MAX_SOCKET_PATH_LEN} bytes, the most a socket path can have"));
    }
    if !path.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '+' | '-' | '@' | ',' | '=')) {
        return Err("holds a character other than letters, digits and `_ . / + - @ , =`, which ssh's forwarding \
                    cannot carry"
            .to_owned());
    }
    Ok(())
}

/// A local path given to ssh's command line.
fn check_local_path(what: &str, path: &Path) -> Result<(), RemoteTargetError> {
    let text = path.as_os_str().to_string_lossy();
    if text.is_empty() {
        return Err(RemoteTargetError(format!("{what} is empty")));
    }
    if text.len() > 4096 {
        return Err(RemoteTargetError(format!("{what} is longer than 4096 bytes")));
    }
    if text.chars().any(char::is_control) {
        return Err(RemoteTargetError(format!("{what} {:?} holds a control character", Shown(&text))));
    }
    if text.starts_with('-') {
        return Err(RemoteTargetError(format!("{what} {:?} starts with `-`", Shown(&text))));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_ssh_takes_are_accepted() {
        for good in [
            "build-3",
            "ada@build-3",
            "ada@build-3.example.com",
            "a.b_c@10.0.0.7",
            "ada@::1",
            "fe80::1%eth0",
            "ssh://build-3",
            "ssh://ada@build-3:2222",
            "ssh://ada@[::1]:22",
            "ssh://[fe80::1%eth0]",
            "my_alias",
        ] {
            assert!(check_destination(good).is_ok(), "{good}: {:?}", check_destination(good));
        }
    }

    #[test]
    fn destinations_that_could_be_anything_else_are_refused() {
        for (bad, says) in [
            ("", "is empty"),
            ("-oProxyCommand=sh", "starts with `-`"),
            ("ada@-oProxyCommand=x", "host name"),
            ("-ada@x", "starts with `-`"),
            ("ada@x y", "host name"),
            ("ada@x;rm", "host name"),
            ("ada@x\n", "host name"),
            ("ada@.x", "host name"),
            ("ada@", "host name"),
            ("@x", "user name"),
            ("ada b@x", "user name"),
            ("ssh://ada@x:0", "port"),
            ("ssh://ada@x:65536", "port"),
            ("ssh://ada@x:22a", "port"),
            ("ssh://ada@[::1", "`]`"),
            ("ssh://ada@[zz::1]:22", "IPv6"),
            ("http://x", "scheme"),
            ("ada@x:22", "IPv6"),
        ] {
            let problem = check_destination(bad).unwrap_err();
            assert!(problem.contains(says), "{bad:?}: {problem}");
        }
        let long = format!("ada@{}", "a".repeat(MAX_DESTINATION_LEN));
        assert!(check_destination(&long).unwrap_err().contains("longer"));
        let error = RemoteTarget::new("-oProxyCommand=sh").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the remote destination \"-oProxyCommand=sh\" starts with `-`, which ssh would read as an option"
        );
    }

    #[test]
    fn remote_programs_need_no_quoting() {
        for good in ["panehost", "/usr/local/bin/panehost", "~/.cargo/bin/panehost", "bin/panehost-0.1+x"] {
            assert!(check_remote_program(good).is_ok(), "{good}");
        }
        for bad in ["", "-x", "panehost; rm -rf ~", "pane host", "$HOME/panehost", "~user/panehost", "a`b`", "a'b"] {
            assert!(check_remote_program(bad).is_err(), "{bad:?}");
        }
        assert!(check_remote_program(&"a".repeat(MAX_PROGRAM_LEN + 1)).is_err());
    }

    #[test]
    fn socket_paths_must_survive_the_forward() {
        assert!(check_socket_path("/run/user/1000/panehost/host.sock").is_ok());
        assert!(check_socket_path("/tmp/panehost-1000/ssh-Ab3x_9/host.sock").is_ok());
        for (bad, says) in [
            ("relative/host.sock", "absolute"),
            ("/a:b/host.sock", "character"),
            ("/a%h/host.sock", "character"),
            ("/a${HOME}/host.sock", "character"),
            ("/a b/host.sock", "character"),
        ] {
            assert!(check_socket_path(bad).unwrap_err().contains(says), "{bad}");
        }
        let long = format!("/{}", "a".repeat(MAX_SOCKET_PATH_LEN));
        assert!(check_socket_path(&long).unwrap_err().contains("longer"));
        assert!(check_socket_path(&long[..MAX_SOCKET_PATH_LEN]).is_ok());
    }

    #[test]
    fn local_paths_are_bounded() {
        let target = RemoteTarget::new("x").unwrap();
        assert!(target.clone().ssh_program("/usr/bin/ssh").is_ok());
        assert!(target.clone().ssh_program("").is_err());
        assert!(target.clone().ssh_program("-oX").is_err());
        assert!(target.clone().ssh_config("/a\nb").is_err());
        assert!(target.ssh_config("/home/ada/.ssh/panehost.conf").is_ok());
    }
}
