//! Environment variables a client gives a pane it starts (`shell` and
//! runtimes from the configuration file only: an agent runtime's
//! environment is built from scratch, from what its adapter declares).

use std::collections::BTreeMap;

/// Variables by name.
pub type ClientEnv = BTreeMap<String, String>;

/// The most variables one start may give.
pub const MAX_ENV_VARS: usize = 64;
/// The longest variable name, in bytes.
pub const MAX_ENV_NAME_LEN: usize = 128;
/// The most bytes of names and values together.
pub const MAX_ENV_BYTES: usize = 64 * 1024;
/// Names that start with this are the host's own (`PANEHOST_PANE`,
/// `PANEHOST_SOCKET`, `PANEHOST_NOTIFY_TOKEN`): a client may not set them.
pub const RESERVED_ENV_PREFIX: &str = "PANEHOST_";

/// Variables a start may not give, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientEnvError {
    /// More than [`MAX_ENV_VARS`].
    #[error("{count} environment variables are too many: at most {MAX_ENV_VARS}")]
    TooMany {
        /// How many were given.
        count: usize,
    },
    /// Names and values larger than [`MAX_ENV_BYTES`] together.
    #[error("the environment variables hold {bytes} bytes: at most {MAX_ENV_BYTES}")]
    TooLarge {
        /// Their size.
        bytes: usize,
    },
    /// A name that is not a portable shell variable name (a letter or `_`,
    /// then letters, digits and `_`, at most [`MAX_ENV_NAME_LEN`] bytes).
    #[error("{name:?} is not a variable name: a letter or '_', then letters, digits and '_', at most {MAX_ENV_NAME_LEN} bytes")]
    BadName {
        /// The name.
        name: String,
    },
    /// A name the host sets itself.
    #[error("{name} is set by the host; names starting with {RESERVED_ENV_PREFIX} are its own")]
    Reserved {
        /// The name.
        name: String,
    },
    /// A value holding a NUL byte, which no environment can carry.
    #[error("the value of {name} holds a NUL byte")]
    Nul {
        /// The variable's name.
        name: String,
    },
}

/// Checks variables against the rules above.
///
/// # Errors
/// The first problem found, as a [`ClientEnvError`].
pub fn check_client_env(env: &ClientEnv) -> Result<(), ClientEnvError> {
    if env.len() > MAX_ENV_VARS {
        return Err(ClientEnvError::TooMany { count: env.len() });
    }
    let bytes: usize = env.iter().map(|(name, value)| name.len() + value.len()).sum();
    if bytes > MAX_ENV_BYTES {
        return Err(ClientEnvError::TooLarge { bytes });
    }
    for (name, value) in env {
        let mut chars = name.bytes();
        let good_name = name.len() <= MAX_ENV_NAME_LEN
            && chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == b'_')
            && chars.all(|byte| byte.is_ascii_alphanumeric() || byte == b'_');
        if !good_name {
            return Err(ClientEnvError::BadName { name: name.clone() });
        }
        if name.starts_with(RESERVED_ENV_PREFIX) {
            return Err(ClientEnvError::Reserved { name: name.clone() });
        }
        if value.contains('\0') {
            return Err(ClientEnvError::Nul { name: name.clone() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ClientEnv {
        pairs.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
    }

    #[test]
    fn variables_are_bounded_and_named_as_a_shell_names_them() {
        assert_eq!(check_client_env(&ClientEnv::new()), Ok(()));
        assert_eq!(check_client_env(&env(&[("TASK_ID", "42"), ("_x9", ""), ("LANG", "C.UTF-8")])), Ok(()));
        let most: ClientEnv = (0..MAX_ENV_VARS).map(|n| (format!("V{n}"), "x".repeat(1000))).collect();
        assert_eq!(check_client_env(&most), Ok(()));
        let too_many: ClientEnv = (0..=MAX_ENV_VARS).map(|n| (format!("V{n}"), String::new())).collect();
        assert_eq!(check_client_env(&too_many), Err(ClientEnvError::TooMany { count: MAX_ENV_VARS + 1 }));
        let large = env(&[("BIG", &"x".repeat(MAX_ENV_BYTES))]);
        assert_eq!(check_client_env(&large), Err(ClientEnvError::TooLarge { bytes: MAX_ENV_BYTES + 3 }));
        let longest = "N".repeat(MAX_ENV_NAME_LEN);
        assert_eq!(check_client_env(&env(&[(&longest, "")])), Ok(()));
        for name in ["", "9LIVES", "A-B", "A=B", "ÜBER", &"N".repeat(MAX_ENV_NAME_LEN + 1)] {
            assert!(matches!(check_client_env(&env(&[(name, "")])), Err(ClientEnvError::BadName { .. })), "{name:?}");
        }
        assert!(matches!(check_client_env(&env(&[("PANEHOST_PANE", "p1")])), Err(ClientEnvError::Reserved { .. })));
        assert!(matches!(check_client_env(&env(&[("X", "a\0b")])), Err(ClientEnvError::Nul { .. })));
    }
}
