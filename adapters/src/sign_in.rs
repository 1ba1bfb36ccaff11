//! Whether the user has signed in to a runtime's provider, as far as that
//! can be seen without asking the provider: the credential files the CLI's
//! own sign-in writes, and the variables that carry a key. Only existence is
//! looked at; no file is read and no value is reported.

use crate::descriptor::{Descriptor, LoginForm};
use crate::environment::HostEnvironment;
use panehost_ipc::runtime::sign_in as wire;

/// What a sign-in reading found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInState {
    /// A credential file exists, or a key variable is set.
    SignedIn,
    /// The runtime declares its traces and none is there.
    SignedOut,
    /// The CLI leaves no trace that can be read without a provider request.
    Unobservable,
    /// The runtime needs no sign-in.
    NotRequired,
}

impl SignInState {
    /// The state as it travels on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            SignInState::SignedIn => wire::SIGNED_IN,
            SignInState::SignedOut => wire::SIGNED_OUT,
            SignInState::Unobservable => wire::UNOBSERVABLE,
            SignInState::NotRequired => wire::NOT_REQUIRED,
        }
    }
}

/// A sign-in state and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInReading {
    /// The state.
    pub state: SignInState,
    /// What was found or looked for, for people; never a secret.
    pub detail: Option<String>,
}

/// Reads the sign-in state of `descriptor`'s runtime for the user whose
/// home and variables `environment` holds. Cheap (a few `stat` calls): it
/// runs every time readiness is assessed.
pub fn observe(descriptor: &Descriptor, environment: &HostEnvironment) -> SignInReading {
    if descriptor.login == LoginForm::NotRequired {
        return SignInReading { state: SignInState::NotRequired, detail: None };
    }
    let Some(traces) = &descriptor.sign_in else {
        return SignInReading {
            state: SignInState::Unobservable,
            detail: Some("the CLI leaves no sign-in trace that can be read without asking its provider".into()),
        };
    };
    if let Some(variable) = traces.credential_variables.iter().find(|name| environment.get(name).is_some()) {
        return SignInReading { state: SignInState::SignedIn, detail: Some(format!("{variable} is set")) };
    }
    let moved = traces.config_dir_variable.as_deref().and_then(|name| environment.get(name));
    let (dir, shown_dir) = match moved {
        Some(dir) => (std::path::PathBuf::from(dir), dir.to_owned()),
        None => (environment.home().join(&traces.config_dir), format!("~/{}", traces.config_dir)),
    };
    let found = traces
        .credential_files
        .iter()
        .find(|file| std::fs::metadata(dir.join(file)).is_ok_and(|metadata| metadata.is_file() && metadata.len() > 0));
    if let Some(file) = found {
        return SignInReading { state: SignInState::SignedIn, detail: Some(format!("{shown_dir}/{file} exists")) };
    }
    let mut looked_for: Vec<String> =
        traces.credential_files.iter().map(|file| format!("{shown_dir}/{file}")).collect();
    looked_for.extend(traces.credential_variables.iter().map(|name| format!("${name}")));
    SignInReading { state: SignInState::SignedOut, detail: Some(format!("none of {}", looked_for.join(", "))) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::SignInTraces;
    use crate::runtimes;

    fn claude_like(home: &std::path::Path, variables: &[(&str, &str)]) -> (Descriptor, HostEnvironment) {
        let mut descriptor = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
        descriptor.sign_in = Some(SignInTraces {
            config_dir_variable: Some("CLAUDE_CONFIG_DIR".into()),
            config_dir: ".claude".into(),
            credential_files: vec![".credentials.json".into()],
            credential_variables: vec!["ANTHROPIC_API_KEY".into()],
        });
        let mut environment = HostEnvironment::default();
        environment.variables.insert("HOME".into(), home.display().to_string());
        for (name, value) in variables {
            environment.variables.insert((*name).into(), (*value).into());
        }
        (descriptor, environment)
    }

    #[test]
    fn a_key_variable_or_a_credentials_file_means_signed_in_and_neither_signed_out() {
        let home = std::env::temp_dir().join(format!("panehost-sign-in-{}", std::process::id()));
        std::fs::create_dir_all(home.join(".claude")).unwrap();

        let (descriptor, environment) = claude_like(&home, &[]);
        let reading = observe(&descriptor, &environment);
        assert_eq!(reading.state, SignInState::SignedOut, "{reading:?}");
        assert!(reading.detail.unwrap().contains("$ANTHROPIC_API_KEY"));

        let (descriptor, environment) = claude_like(&home, &[("ANTHROPIC_API_KEY", "secret-value")]);
        let reading = observe(&descriptor, &environment);
        assert_eq!(reading.state, SignInState::SignedIn);
        assert!(!reading.detail.unwrap().contains("secret-value"), "a value is never reported");

        // An empty file is no credential.
        std::fs::write(home.join(".claude/.credentials.json"), "").unwrap();
        let (descriptor, environment) = claude_like(&home, &[]);
        assert_eq!(observe(&descriptor, &environment).state, SignInState::SignedOut);
        std::fs::write(home.join(".claude/.credentials.json"), "{}").unwrap();
        assert_eq!(observe(&descriptor, &environment).state, SignInState::SignedIn);

        // The configuration directory moved elsewhere: the file there counts.
        let (descriptor, mut environment) = claude_like(&home, &[]);
        environment.variables.insert("CLAUDE_CONFIG_DIR".into(), home.join("elsewhere").display().to_string());
        let reading = observe(&descriptor, &environment);
        assert_eq!(reading.state, SignInState::SignedOut);
        assert!(reading.detail.unwrap().contains("elsewhere/.credentials.json"));
        std::fs::remove_dir_all(&home).unwrap();
    }

    #[test]
    fn no_traces_is_unobservable_and_no_login_is_not_required() {
        let catalog = runtimes::built_in();
        let shell = catalog.iter().find(|d| d.id == "shell").unwrap();
        assert_eq!(observe(shell, &HostEnvironment::default()).state, SignInState::NotRequired);
        let mut unobservable = catalog.iter().find(|d| d.id == "claude").unwrap().clone();
        unobservable.sign_in = None;
        assert_eq!(observe(&unobservable, &HostEnvironment::default()).state, SignInState::Unobservable);
    }
}
