//! What a descriptor relies on a CLI's help to list, and the check of a
//! help text against it.
//!
//! One definition serves two readers: the evidence test checks the recorded
//! help of the real CLIs (`adapters/evidence/`), and the canary checks the
//! help a candidate version prints. Both ask the CLI the same
//! [`help_commands`] and apply the same [`unmet_requirements`].
//!
//! A requirement is a flag or subcommand word the launcher passes (start
//! arguments, the model flag, resume forms, the in-terminal sign-in, the
//! permission profiles, the hook injection), or a value a permission
//! profile passes (a sandbox policy, an approval mode, a tool name). The
//! self-update switches are not requirements: most CLIs do not list them in
//! their help, so they are [`self_update_switches`], reported as verified
//! only when a help text happens to show them.

use crate::descriptor::{Descriptor, LoginForm, ModelForm};

/// How a requirement is looked for in help.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequirementKind {
    /// A flag or subcommand word, as a word of its own (see [`lists_flag`]).
    Flag,
    /// A value of an option, as a word of the help (see [`lists_value`]).
    Value,
}

/// Which help must list a requirement.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum HelpScope {
    /// Any of the help texts of [`help_commands`].
    Any,
    /// The help of this subcommand (`SUBCOMMAND --help`): flags a resume
    /// subcommand must take because they follow it.
    Subcommand(String),
}

/// One thing the descriptor relies on the CLI's help to list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The flag, word or value, as the launcher passes it (a flag without
    /// its `=value`).
    pub token: String,
    /// How it is looked for.
    pub kind: RequirementKind,
    /// Where it must be listed.
    pub scope: HelpScope,
}

/// The help texts of one CLI, each with the arguments that printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HelpTexts {
    entries: Vec<(Vec<String>, String)>,
}

impl HelpTexts {
    /// No help yet.
    pub fn new() -> HelpTexts {
        HelpTexts::default()
    }

    /// Adds what `args` printed.
    pub fn insert(&mut self, args: Vec<String>, text: String) {
        self.entries.push((args, text));
    }

    /// What `args` printed, if it was asked.
    pub fn of(&self, args: &[String]) -> Option<&str> {
        self.entries.iter().find(|(asked, _)| asked.as_slice() == args).map(|(_, text)| text.as_str())
    }

    /// Every text, joined.
    pub fn joined(&self) -> String {
        self.entries.iter().map(|(_, text)| text.as_str()).collect::<Vec<_>>().join("\n")
    }
}

/// The help commands whose output holds every requirement: `--help`, then
/// `SUBCOMMAND --help` for each subcommand a resume form or the sign-in
/// leads with, in that order, without repeats.
pub fn help_commands(descriptor: &Descriptor) -> Vec<Vec<String>> {
    let mut commands = vec![vec!["--help".to_owned()]];
    let mut subcommands: Vec<&str> = descriptor
        .resume_forms
        .iter()
        .filter(|form| form.leads)
        .filter_map(|form| form.args.first().map(String::as_str))
        .collect();
    if let LoginForm::InTerminal { args } = &descriptor.login {
        subcommands.extend(args.first().map(String::as_str).filter(|word| !word.starts_with('-')));
    }
    for subcommand in subcommands {
        let command = vec![subcommand.to_owned(), "--help".to_owned()];
        if !commands.contains(&command) {
            commands.push(command);
        }
    }
    commands
}

/// The flags and subcommand words a descriptor's launcher passes, in
/// declaration order (repeats kept).
pub fn relied_on_flags(descriptor: &Descriptor) -> Vec<String> {
    let mut tokens = Vec::new();
    tokens.extend(flags_of(&descriptor.base_args));
    if let ModelForm::Optional { flag: model } | ModelForm::Required { flag: model } = &descriptor.model {
        tokens.push(model.clone());
    }
    for form in &descriptor.resume_forms {
        if form.leads {
            tokens.extend(form.args.first().cloned());
        }
        tokens.extend(flags_of(&form.args));
    }
    if let LoginForm::InTerminal { args } = &descriptor.login {
        tokens.extend(args.iter().take(1).cloned());
    }
    for (_, form) in &descriptor.permission_profiles {
        tokens.extend(flags_of(&form.args));
    }
    if let Some(hooks) = descriptor.hook_injection {
        tokens.extend(hooks.flags().iter().map(|flag| (*flag).to_owned()));
    }
    // The declared hooks' flags, as for any other arguments.
    tokens.extend(descriptor.declared_hooks.iter().flat_map(|hooks| flags_of(&hooks.args)));
    tokens
}

/// The values a descriptor's permission profiles pass (after `=`, or as
/// arguments of their own), each item of a comma-separated list on its own:
/// sandbox policies, approval modes, tool names.
pub fn profile_values(descriptor: &Descriptor) -> Vec<String> {
    let mut values = Vec::new();
    for (_, form) in &descriptor.permission_profiles {
        for arg in &form.args {
            let value = match arg.split_once('=') {
                Some((_, value)) if arg.starts_with('-') => value,
                None if !arg.starts_with('-') => arg.as_str(),
                _ => continue,
            };
            values.extend(value.split(',').map(str::to_owned));
        }
    }
    values
}

/// Everything a descriptor relies on the help to list, without repeats:
/// [`relied_on_flags`] and [`profile_values`] anywhere in the help, and the
/// permission profiles' flags in the help of each resume subcommand.
pub fn requirements(descriptor: &Descriptor) -> Vec<Requirement> {
    let mut found: Vec<Requirement> = Vec::new();
    let mut add = |token: String, kind: RequirementKind, scope: HelpScope| {
        let requirement = Requirement { token, kind, scope };
        if !found.contains(&requirement) {
            found.push(requirement);
        }
    };
    for token in relied_on_flags(descriptor) {
        add(token, RequirementKind::Flag, HelpScope::Any);
    }
    for value in profile_values(descriptor) {
        add(value, RequirementKind::Value, HelpScope::Any);
    }
    for form in descriptor.resume_forms.iter().filter(|form| form.leads) {
        let Some(subcommand) = form.args.first() else { continue };
        for (_, profile) in &descriptor.permission_profiles {
            for flag in flags_of(&profile.args) {
                add(flag, RequirementKind::Flag, HelpScope::Subcommand(subcommand.clone()));
            }
        }
    }
    found
}

/// The requirements `help` does not list. A requirement scoped to a
/// subcommand whose help was not printed is unmet.
pub fn unmet_requirements(descriptor: &Descriptor, help: &HelpTexts) -> Vec<Requirement> {
    let all = help.joined();
    requirements(descriptor)
        .into_iter()
        .filter(|requirement| {
            let text = match &requirement.scope {
                HelpScope::Any => Some(all.as_str()),
                HelpScope::Subcommand(subcommand) => help.of(&[subcommand.clone(), "--help".to_owned()]),
            };
            !text.is_some_and(|text| match requirement.kind {
                RequirementKind::Flag => lists_flag(text, &requirement.token),
                RequirementKind::Value => lists_value(text, &requirement.token),
            })
        })
        .collect()
}

/// What switches off the CLI's self-update, as words a help text might
/// show: the flags and values of its arguments and the names of its
/// variables. Help seldom lists them; a reader reports those it does not
/// find as unverified rather than missing.
pub fn self_update_switches(descriptor: &Descriptor) -> Vec<String> {
    let switches = &descriptor.self_update_off;
    let mut words = Vec::new();
    for arg in &switches.args {
        match arg.split_once('=') {
            Some((key, _)) if !arg.starts_with('-') => words.push(key.to_owned()),
            _ => words.push(flag_of(arg)),
        }
    }
    words.extend(switches.environment.iter().map(|(name, _)| name.clone()));
    words
}

/// True when `token` is a word of `help` (words end at white space and at
/// `,[]()<>|` and backquotes), as help lists flags and subcommands.
pub fn lists_flag(help: &str, token: &str) -> bool {
    help.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '(' | ')' | '`' | '|' | '<' | '>'))
        .any(|word| word == token)
}

/// True when `value` is a word of `help` made of letters, digits, `-` and
/// `_`: the possible values of an option are listed quoted, after a colon,
/// or as `kind(argument)`.
pub fn lists_value(help: &str, value: &str) -> bool {
    help.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))).any(|word| word == value)
}

/// The flags among `args`, each without its `=value`.
fn flags_of(args: &[String]) -> impl Iterator<Item = String> + '_ {
    args.iter().filter(|arg| arg.starts_with('-')).map(|arg| flag_of(arg))
}

fn flag_of(arg: &str) -> String {
    arg.split('=').next().unwrap_or(arg).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtimes;

    fn built_in(id: &str) -> Descriptor {
        runtimes::built_in().into_iter().find(|descriptor| descriptor.id == id).unwrap()
    }

    #[test]
    fn a_resume_subcommand_and_the_sign_in_get_their_own_help() {
        let codex = built_in("codex");
        assert_eq!(help_commands(&codex), [vec!["--help"], vec!["resume", "--help"], vec!["login", "--help"]]);
        let claude = built_in("claude");
        assert_eq!(help_commands(&claude), [vec!["--help"], vec!["auth", "--help"]]);
    }

    #[test]
    fn requirements_name_flags_values_and_scopes() {
        let codex = built_in("codex");
        let found = requirements(&codex);
        let flag =
            |token: &str, scope: HelpScope| Requirement { token: token.into(), kind: RequirementKind::Flag, scope };
        assert!(found.contains(&flag("--no-daemon", HelpScope::Any)));
        assert!(found.contains(&flag("resume", HelpScope::Any)));
        assert!(found.contains(&flag("-s", HelpScope::Subcommand("resume".into()))));
        assert!(found.contains(&Requirement {
            token: "workspace-write".into(),
            kind: RequirementKind::Value,
            scope: HelpScope::Any
        }));
        assert_eq!(found.iter().filter(|requirement| requirement.token == "-s").count(), 2);
    }

    #[test]
    fn help_that_lacks_a_flag_leaves_it_unmet() {
        let fixture = built_in("fixture");
        let mut help = HelpTexts::new();
        help.insert(vec!["--help".into()], "usage: x [--resume ID] [--continue]".into());
        assert!(unmet_requirements(&fixture, &help).is_empty());
        let mut help = HelpTexts::new();
        help.insert(vec!["--help".into()], "usage: x [--resume ID]".into());
        let unmet = unmet_requirements(&fixture, &help);
        assert_eq!(unmet.len(), 1);
        assert_eq!(unmet[0].token, "--continue");
    }

    #[test]
    fn a_scoped_requirement_needs_its_subcommand_help() {
        let codex = built_in("codex");
        let mut help = HelpTexts::new();
        help.insert(
            vec!["--help".into()],
            "-s -a -m --no-daemon --last resume login -c read-only workspace-write danger-full-access on-request never"
                .into(),
        );
        let unmet = unmet_requirements(&codex, &help);
        assert!(unmet.iter().all(|requirement| matches!(requirement.scope, HelpScope::Subcommand(_))), "{unmet:?}");
        assert!(unmet.iter().any(|requirement| requirement.token == "-s"));
    }

    #[test]
    fn self_update_switches_are_flags_keys_and_names() {
        assert_eq!(self_update_switches(&built_in("codex")), ["-c", "check_for_update_on_startup"]);
        assert_eq!(
            self_update_switches(&built_in("claude")),
            ["DISABLE_AUTOUPDATER", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"]
        );
    }
}
