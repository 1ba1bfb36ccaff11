//! One `[runtime.<id>]` table: read, checked, and turned into a descriptor.
//!
//! Every check records a problem and goes on, so one pass reports all that
//! is wrong with a runtime. A descriptor is built only when nothing was
//! wrong, and then held to the limitation contract.

use super::locate::Locator;
use super::{ConfigProblem, RUNTIME_TABLE};
use crate::completion::{DeclaredHooks, HookInjection, NOTIFY_COMMAND_PLACEHOLDER, NOTIFY_PROGRAM_PLACEHOLDER};
use crate::contract::{implied_limitations, LaunchFacts};
use crate::descriptor::{
    CommandPolicy, CompletionSignal, Descriptor, Evidence, Executable, LoginForm, ModelForm, ReceiptForm,
    ReceiptSupport, RefusedVersions, ResumeForm, ResumeMode, SelfUpdateOff, VersionProbe, PROMPT_PLACEHOLDER,
    REFERENCE_PLACEHOLDER,
};
use crate::environment::HostEnvironment;
use crate::reference_pattern::ReferencePattern;
use crate::runtimes::agent_cli;
use panehost_ipc::limitation;
use std::collections::BTreeSet;
use toml::{Table, Value};

/// The keys of a runtime table.
const RUNTIME_KEYS: &[&str] = &[
    "display_name",
    "executable",
    "known_paths",
    "version_args",
    "version_floor",
    "refused_versions",
    "supported",
    "base_args",
    "model_flag",
    "model_required",
    "interrupt_keys",
    "interrupt_keeps_request",
    "reads_raw_input",
    "ready_marker",
    "reads_environment",
    "environment",
    "self_update_args",
    "self_update_environment",
    "completion_args",
    "completion_environment",
    "login",
    "login_args",
    "receipt_args",
    "resume",
    "limitations",
];

/// The keys of a runtime's `resume` table.
const RESUME_KEYS: &[&str] = &["reference", "reference_pattern", "latest", "picker", "leads"];

/// The keys of an entry of `refused_versions`.
const REFUSED_VERSION_KEYS: &[&str] = &["from", "before", "reason"];

/// Most entries `refused_versions` may hold.
const MAX_REFUSED_RANGES: usize = 32;

/// Longest reason of a refused range, in bytes.
const MAX_REFUSAL_REASON: usize = 256;

/// The values of `login`.
const LOGIN_VALUES: &[&str] = &["in_terminal", "outside_terminal", "not_required"];

/// Longest runtime id.
const MAX_ID_LEN: usize = 32;

/// Most bytes `interrupt_keys` may hold.
const MAX_INTERRUPT_KEYS: usize = 16;

/// Most bytes `ready_marker` may hold: it is looked for in one line of the
/// screen.
const MAX_READY_MARKER: usize = 256;

/// Variables the host sets for every pane, after the descriptor's own: a
/// runtime setting them would be silently overridden.
const HOST_SET_VARIABLES: &[&str] = &["TERM", "COLORTERM"];

/// Reads the runtime `id` from its table.
pub(super) fn read(
    id: &str,
    value: &Value,
    built_in_ids: &[&str],
    locator: &Locator,
) -> Result<Descriptor, Vec<ConfigProblem>> {
    let mut reader = Reader { id, locator, problems: Vec::new() };
    if !valid_id(id) {
        reader.problem(
            &[],
            format!(
                "the id must be a lowercase letter followed by at most {} lowercase letters, digits, `_` or `-`",
                MAX_ID_LEN - 1
            ),
        );
    }
    if built_in_ids.contains(&id) {
        reader.problem(&[], format!("the id {id:?} is taken by a built-in runtime"));
    }
    let Value::Table(table) = value else {
        reader.problem(&[], format!("a runtime must be a table, not {}", a_type(value)));
        return Err(reader.problems);
    };
    let descriptor = reader.descriptor(table);
    let declared = table.contains_key("limitations");
    if !reader.problems.is_empty() && !declared {
        reader.problem(&[], "`limitations` is required");
    }
    match descriptor {
        Some(descriptor) if reader.problems.is_empty() => {
            reader.check_contract(&descriptor, declared);
            if reader.problems.is_empty() {
                Ok(descriptor)
            } else {
                Err(reader.problems)
            }
        }
        _ => Err(reader.problems),
    }
}

/// The problems of one runtime, and where its keys are.
struct Reader<'a> {
    id: &'a str,
    locator: &'a Locator,
    problems: Vec<ConfigProblem>,
}

impl Reader<'_> {
    /// The line of the key at `path` (below the runtime's table), else of
    /// the nearest enclosing key that is written somewhere.
    fn line(&self, path: &[&str]) -> Option<usize> {
        let mut full = vec![RUNTIME_TABLE, self.id];
        full.extend_from_slice(path);
        (2..=full.len()).rev().find_map(|len| self.locator.line_of_key(&full[..len]))
    }

    fn problem(&mut self, path: &[&str], message: impl Into<String>) {
        let line = self.line(path);
        self.problems.push(ConfigProblem { line, runtime: Some(self.id.to_owned()), message: message.into() });
    }

    /// Reads every key; `None` when something required is missing or wrong
    /// (a problem says what).
    fn descriptor(&mut self, table: &Table) -> Option<Descriptor> {
        self.refuse_unknown_keys(table, &[], RUNTIME_KEYS);

        let display_name = self.required(table, "display_name", Reader::string);
        if let Some(name) = &display_name {
            if name.trim().is_empty() || name.chars().any(char::is_control) {
                self.problem(&["display_name"], "`display_name` must be non-empty text on one line");
            }
        }

        let names = self.required(table, "executable", Reader::strings);
        if let Some(names) = &names {
            if names.is_empty() {
                self.problem(&["executable"], "`executable` must name at least one executable");
            }
            for (index, name) in names.iter().enumerate() {
                if !plain_executable_name(name) {
                    self.problem(
                        &["executable"],
                        format!(
                            "`executable` item {}: {name:?} is not a plain executable name (no `/`, no spaces); list absolute paths in `known_paths`",
                            index + 1
                        ),
                    );
                }
            }
        }

        let known_paths = self.optional(table, "known_paths", Reader::strings);
        for (index, path) in known_paths.iter().flatten().enumerate() {
            let rooted = path.starts_with('/') || path.starts_with("~/");
            if !rooted || path.chars().any(char::is_control) {
                self.problem(
                    &["known_paths"],
                    format!("`known_paths` item {}: {path:?} must be an absolute path or start with `~/`", index + 1),
                );
            }
        }

        let version_args = self.args(table, "version_args").unwrap_or_else(|| vec!["--version".to_owned()]);
        let version_floor = self.optional(table, "version_floor", Reader::string);
        if let Some(floor) = &version_floor {
            if !dotted_version(floor) {
                self.problem(
                    &["version_floor"],
                    format!("`version_floor` {floor:?} must be dotted numbers, such as \"1.2.0\""),
                );
            }
        }

        let refused_versions = self.refused_versions(table);

        let supported = self.optional(table, "supported", Reader::boolean).unwrap_or(true);
        let base_args = self.args(table, "base_args").unwrap_or_default();
        let model = self.model(table);

        let interrupt_keys = self.optional(table, "interrupt_keys", Reader::string).map(String::into_bytes);
        if let Some(keys) = &interrupt_keys {
            if keys.is_empty() || keys.len() > MAX_INTERRUPT_KEYS {
                self.problem(
                    &["interrupt_keys"],
                    format!("`interrupt_keys` must hold 1 to {MAX_INTERRUPT_KEYS} bytes"),
                );
            }
        }

        let interrupt_keeps_request = self.optional(table, "interrupt_keeps_request", Reader::boolean).unwrap_or(false);
        let reads_raw_input = self.optional(table, "reads_raw_input", Reader::boolean).unwrap_or(true);
        let ready_marker = self.optional(table, "ready_marker", Reader::string);
        if let Some(marker) = &ready_marker {
            if marker.trim().is_empty() || marker.len() > MAX_READY_MARKER || marker.chars().any(char::is_control) {
                self.problem(
                    &["ready_marker"],
                    format!("`ready_marker` must be text of one line, 1 to {MAX_READY_MARKER} bytes, not only spaces"),
                );
            }
        }

        let reads_environment = self.optional(table, "reads_environment", Reader::strings).unwrap_or_default();
        for (index, name) in reads_environment.iter().enumerate() {
            if !variable_name(name) {
                self.problem(
                    &["reads_environment"],
                    format!("`reads_environment` item {}: {name:?} is not a variable name", index + 1),
                );
            }
        }
        let environment = self.variables(table, "environment");
        let self_update_args = self.args(table, "self_update_args").unwrap_or_default();
        let self_update_environment = self.variables(table, "self_update_environment");
        let declared_hooks = self.declared_hooks(table);
        let login = self.login(table);
        let (resume_forms, reference_pattern) = match table.get("resume") {
            Some(resume) => self.resume(resume),
            None => (Vec::new(), None),
        };
        let receipt = self.receipt(table);
        let limitations = self.limitations(table);

        let (display_name, names, login) = (display_name?, names?, login?);
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut descriptor = agent_cli(self.id, &display_name, &name_refs, Evidence::Operator);
        if let (Some(paths), Executable::Named { known_paths, .. }) = (known_paths, &mut descriptor.executable) {
            *known_paths = paths;
        }
        descriptor.version = VersionProbe { args: version_args, floor: version_floor };
        descriptor.refused_versions = refused_versions;
        descriptor.supported = supported;
        descriptor.command_policy = CommandPolicy::HostBuildsArgv;
        descriptor.base_args = base_args;
        descriptor.model = model;
        descriptor.resume_forms = resume_forms;
        descriptor.reference_pattern = reference_pattern;
        if let Some(keys) = interrupt_keys {
            descriptor.interrupt_keys = keys;
        }
        descriptor.interrupt_keeps_request = interrupt_keeps_request;
        descriptor.reads_raw_input = reads_raw_input;
        descriptor.ready_marker = ready_marker;
        // Declared hooks are how a custom runtime's turns are observed.
        descriptor.completion =
            if declared_hooks.is_some() { CompletionSignal::Hook } else { CompletionSignal::Unobserved };
        descriptor.hook_injection = declared_hooks.as_ref().map(|_| HookInjection::Declared);
        descriptor.declared_hooks = declared_hooks;
        descriptor.login = login;
        descriptor.receipt = receipt;
        descriptor.reads_environment = reads_environment;
        descriptor.environment = environment;
        descriptor.self_update_off =
            SelfUpdateOff { args: self_update_args, environment: self_update_environment, note: None };
        descriptor.limitations = limitations.unwrap_or_default();
        Some(descriptor)
    }

    /// The declared limitations must be what the launcher implies.
    fn check_contract(&mut self, descriptor: &Descriptor, declared_any: bool) {
        let facts = LaunchFacts::gather(descriptor, &HostEnvironment::default());
        let implied = implied_limitations(&facts);
        let declared: BTreeSet<String> = descriptor.limitations.iter().cloned().collect();
        if implied == declared {
            return;
        }
        let list = |codes: &BTreeSet<String>| codes.iter().cloned().collect::<Vec<_>>().join(", ");
        let as_toml = format!(
            "limitations = [{}]",
            implied.iter().map(|code| format!("{code:?}")).collect::<Vec<_>>().join(", ")
        );
        if !declared_any {
            self.problem(
                &[],
                format!("`limitations` is missing; what this runtime's launcher produces implies {as_toml}"),
            );
            return;
        }
        let missing: BTreeSet<String> = implied.difference(&declared).cloned().collect();
        let extra: BTreeSet<String> = declared.difference(&implied).cloned().collect();
        let mut parts = Vec::new();
        if !missing.is_empty() {
            parts.push(format!("missing {}", list(&missing)));
        }
        if !extra.is_empty() {
            parts.push(format!("declared but not implied {}", list(&extra)));
        }
        self.problem(
            &["limitations"],
            format!(
                "`limitations` must be exactly what this runtime's launcher implies ({}); expected {as_toml}",
                parts.join("; ")
            ),
        );
    }

    fn refuse_unknown_keys(&mut self, table: &Table, under: &[&str], known: &[&str]) {
        for key in table.keys() {
            if known.contains(&key.as_str()) {
                continue;
            }
            let mut path = under.to_vec();
            path.push(key);
            let mut message = format!("unknown key `{}`", path.join("."));
            if let Some(close) = closest(key, known) {
                message.push_str(&format!(" (did you mean `{close}`?)"));
            } else if !under.is_empty() && RUNTIME_KEYS.contains(&key.as_str()) {
                message.push_str(&format!(
                    " (`{key}` belongs in the runtime's own table, before `[runtime.{}.{}]`)",
                    self.id,
                    under.join(".")
                ));
            }
            self.problem(&path, message);
        }
    }

    /// A key that must be present.
    fn required<T>(
        &mut self,
        table: &Table,
        key: &str,
        read: fn(&mut Self, &Value, &[&str]) -> Option<T>,
    ) -> Option<T> {
        if !table.contains_key(key) {
            self.problem(&[], format!("`{key}` is required"));
        }
        self.optional(table, key, read)
    }

    /// A key that may be absent; `None` also when its value is wrong.
    fn optional<T>(
        &mut self,
        table: &Table,
        key: &str,
        read: fn(&mut Self, &Value, &[&str]) -> Option<T>,
    ) -> Option<T> {
        table.get(key).and_then(|value| read(self, value, &[key]))
    }

    fn string(&mut self, value: &Value, path: &[&str]) -> Option<String> {
        match value {
            Value::String(text) => Some(text.clone()),
            other => {
                self.problem(path, format!("`{}` must be a string, not {}", path.join("."), a_type(other)));
                None
            }
        }
    }

    fn boolean(&mut self, value: &Value, path: &[&str]) -> Option<bool> {
        match value {
            Value::Boolean(flag) => Some(*flag),
            other => {
                self.problem(path, format!("`{}` must be true or false, not {}", path.join("."), a_type(other)));
                None
            }
        }
    }

    fn strings(&mut self, value: &Value, path: &[&str]) -> Option<Vec<String>> {
        let Value::Array(items) = value else {
            self.problem(path, format!("`{}` must be an array of strings, not {}", path.join("."), a_type(value)));
            return None;
        };
        let mut strings = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match item {
                Value::String(text) => strings.push(text.clone()),
                other => {
                    self.problem(
                        path,
                        format!("`{}` item {} must be a string, not {}", path.join("."), index + 1, a_type(other)),
                    );
                    return None;
                }
            }
        }
        Some(strings)
    }

    /// An optional list of arguments, each checked; `{reference}` refused.
    fn args(&mut self, table: &Table, key: &str) -> Option<Vec<String>> {
        let args = self.optional(table, key, Reader::strings)?;
        self.check_args(&[key], &args, false);
        Some(args)
    }

    /// Every argument non-empty and on one line; `{reference}` only where
    /// it is `allowed`.
    fn check_args(&mut self, path: &[&str], args: &[String], placeholder_allowed: bool) {
        let name = path.join(".");
        for (index, arg) in args.iter().enumerate() {
            let item = index + 1;
            if arg.is_empty() {
                self.problem(path, format!("`{name}` item {item} is empty"));
            } else if arg.chars().any(char::is_control) {
                self.problem(path, format!("`{name}` item {item} contains a control character (NUL, newline, ...)"));
            }
            if !placeholder_allowed && arg.contains(REFERENCE_PLACEHOLDER) {
                self.problem(
                    path,
                    format!("`{name}` item {item} contains {REFERENCE_PLACEHOLDER}, which only `resume.reference` may carry"),
                );
            }
        }
    }

    /// The hooks of `completion_args` and `completion_environment`, if
    /// either is given; they must name the notify command somewhere.
    fn declared_hooks(&mut self, table: &Table) -> Option<DeclaredHooks> {
        let args = self.args(table, "completion_args").unwrap_or_default();
        let environment = self.variables(table, "completion_environment");
        if args.is_empty() && environment.is_empty() {
            return None;
        }
        let hooks = DeclaredHooks { args, environment };
        if !hooks.names_the_host() {
            let key = if table.contains_key("completion_args") { "completion_args" } else { "completion_environment" };
            self.problem(
                &[key],
                format!(
                    "`completion_args` and `completion_environment` never name the host's notify command \
                     ({NOTIFY_COMMAND_PLACEHOLDER} or {NOTIFY_PROGRAM_PLACEHOLDER}): hooks that do not cannot \
                     report a turn"
                ),
            );
            return None;
        }
        Some(hooks)
    }

    /// A table of variables set for every launch.
    fn variables(&mut self, table: &Table, key: &str) -> Vec<(String, String)> {
        let Some(value) = table.get(key) else {
            return Vec::new();
        };
        let Value::Table(variables) = value else {
            self.problem(
                &[key],
                format!("`{key}` must be a table of strings, such as {{ NAME = \"value\" }}, not {}", a_type(value)),
            );
            return Vec::new();
        };
        let mut pairs = Vec::with_capacity(variables.len());
        for (name, value) in variables {
            let path = [key, name.as_str()];
            if !variable_name(name) {
                self.problem(&path, format!("`{key}`: {name:?} is not a variable name"));
            } else if HOST_SET_VARIABLES.contains(&name.as_str()) {
                self.problem(&path, format!("`{key}`: {name} is set by the host for every pane"));
            }
            match value {
                Value::String(text) if text.contains('\0') => {
                    self.problem(&path, format!("`{key}.{name}` contains a NUL byte"));
                }
                Value::String(text) => pairs.push((name.clone(), text.clone())),
                other => self.problem(&path, format!("`{key}.{name}` must be a string, not {}", a_type(other))),
            }
        }
        pairs
    }

    fn model(&mut self, table: &Table) -> ModelForm {
        let flag = self.optional(table, "model_flag", Reader::string);
        if let Some(flag) = &flag {
            self.check_args(&["model_flag"], std::slice::from_ref(flag), false);
        }
        let required = self.optional(table, "model_required", Reader::boolean).unwrap_or(false);
        match (flag, required) {
            (None, false) => ModelForm::NotTaken,
            (None, true) => {
                self.problem(&["model_required"], "`model_required` needs `model_flag`");
                ModelForm::NotTaken
            }
            (Some(flag), false) => ModelForm::Optional { flag },
            (Some(flag), true) => ModelForm::Required { flag },
        }
    }

    /// The one-shot command line a completion receipt runs, if given: it
    /// carries `{prompt}` exactly once (`{read_only}` expands to nothing: a
    /// custom runtime enforces no profile).
    fn receipt(&mut self, table: &Table) -> ReceiptSupport {
        let Some(args) = self.optional(table, "receipt_args", Reader::strings) else {
            return ReceiptSupport::Unavailable;
        };
        self.check_args(&["receipt_args"], &args, false);
        let prompts = args.iter().filter(|arg| *arg == PROMPT_PLACEHOLDER).count();
        if prompts != 1 {
            self.problem(
                &["receipt_args"],
                format!("`receipt_args` must carry {PROMPT_PLACEHOLDER} as one item exactly once (it has {prompts})"),
            );
        }
        ReceiptSupport::OneShot(ReceiptForm { args, read_only_args: None })
    }

    fn login(&mut self, table: &Table) -> Option<LoginForm> {
        let login = self.optional(table, "login", Reader::string);
        let args = self.optional(table, "login_args", Reader::strings);
        if let Some(args) = &args {
            self.check_args(&["login_args"], args, false);
        }
        match login.as_deref().unwrap_or("outside_terminal") {
            "in_terminal" => Some(LoginForm::InTerminal { args: args.unwrap_or_default() }),
            other => {
                if args.is_some() {
                    self.problem(&["login_args"], "`login_args` is only for login = \"in_terminal\"");
                }
                match other {
                    "outside_terminal" => Some(LoginForm::OutsideTerminal),
                    "not_required" => Some(LoginForm::NotRequired),
                    unknown => {
                        self.problem(
                            &["login"],
                            format!("`login` is {unknown:?}; it must be one of \"{}\"", LOGIN_VALUES.join("\", \"")),
                        );
                        None
                    }
                }
            }
        }
    }

    /// The resume forms, in the order of [`ResumeMode::ALL`], and the
    /// pattern references must match.
    fn resume(&mut self, value: &Value) -> (Vec<ResumeForm>, Option<ReferencePattern>) {
        let Value::Table(table) = value else {
            self.problem(&["resume"], format!("`resume` must be a table, not {}", a_type(value)));
            return (Vec::new(), None);
        };
        self.refuse_unknown_keys(table, &["resume"], RESUME_KEYS);
        let leads = table.get("leads").and_then(|value| self.boolean(value, &["resume", "leads"])).unwrap_or(false);
        let reference = self.resume_strings(table, "reference");
        let pattern_source =
            table.get("reference_pattern").and_then(|value| self.string(value, &["resume", "reference_pattern"]));
        let latest = self.resume_strings(table, "latest");
        let picker = self.resume_strings(table, "picker");

        let mut forms = Vec::new();
        if let Some(args) = reference {
            let path = ["resume", "reference"];
            self.check_args(&path, &args, true);
            let carried: usize = args.iter().map(|arg| arg.matches(REFERENCE_PLACEHOLDER).count()).sum();
            if carried != 1 {
                self.problem(
                    &path,
                    format!("`resume.reference` must carry {REFERENCE_PLACEHOLDER} exactly once, not {carried} times"),
                );
            }
            if !table.contains_key("reference_pattern") {
                self.problem(
                    &path,
                    "`resume.reference` needs `resume.reference_pattern`: a reference reaches argv only when the pattern accepts it whole",
                );
            }
            forms.push(ResumeForm { mode: ResumeMode::Reference, args, leads });
        } else if pattern_source.is_some() {
            self.problem(&["resume", "reference_pattern"], "`resume.reference_pattern` is only for `resume.reference`");
        }
        for (key, mode, args) in
            [("latest", ResumeMode::ProviderSelection, latest), ("picker", ResumeMode::InteractivePicker, picker)]
        {
            let Some(args) = args else { continue };
            let path = ["resume", key];
            if args.is_empty() {
                self.problem(&path, format!("`resume.{key}` must have at least one argument"));
            }
            self.check_args(&path, &args, false);
            forms.push(ResumeForm { mode, args, leads });
        }

        let pattern = pattern_source.and_then(|source| {
            let path = ["resume", "reference_pattern"];
            if source.is_empty() {
                self.problem(&path, "`resume.reference_pattern` is empty");
                return None;
            }
            match ReferencePattern::new(&source) {
                Ok(pattern) => Some(pattern),
                Err(error) => {
                    self.problem(
                        &path,
                        format!("`resume.reference_pattern` is not a valid pattern: {}", regex_reason(&error)),
                    );
                    None
                }
            }
        });
        (forms, pattern)
    }

    fn resume_strings(&mut self, resume: &Table, key: &str) -> Option<Vec<String>> {
        resume.get(key).and_then(|value| self.strings(value, &["resume", key]))
    }

    /// `refused_versions = [{ from = "1.52.0", before = "1.53.0", reason = "..." }]`:
    /// each range from dotted numbers to (optionally) later ones, with a
    /// one-line reason.
    fn refused_versions(&mut self, table: &Table) -> Vec<RefusedVersions> {
        let Some(value) = table.get("refused_versions") else { return Vec::new() };
        let Value::Array(items) = value else {
            self.problem(
                &["refused_versions"],
                format!("`refused_versions` must be an array of tables, not {}", a_type(value)),
            );
            return Vec::new();
        };
        if items.len() > MAX_REFUSED_RANGES {
            self.problem(
                &["refused_versions"],
                format!("`refused_versions` holds at most {MAX_REFUSED_RANGES} ranges"),
            );
            return Vec::new();
        }
        let mut ranges = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let which = format!("`refused_versions` item {}", index + 1);
            let Value::Table(entry) = item else {
                self.problem(&["refused_versions"], format!("{which} must be a table, not {}", a_type(item)));
                continue;
            };
            if let Some(key) = entry.keys().find(|key| !REFUSED_VERSION_KEYS.contains(&key.as_str())) {
                self.problem(
                    &["refused_versions"],
                    format!("{which}: unknown key `{key}`; the keys are {}", REFUSED_VERSION_KEYS.join(", ")),
                );
                continue;
            }
            let text = |key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
            let (from, before, reason) = (text("from"), text("before"), text("reason"));
            let Some(from) = from.filter(|from| dotted_version(from)) else {
                self.problem(
                    &["refused_versions"],
                    format!("{which}: `from` must be dotted numbers, such as \"1.2.0\""),
                );
                continue;
            };
            if entry.contains_key("before") && !before.as_deref().is_some_and(dotted_version) {
                self.problem(
                    &["refused_versions"],
                    format!("{which}: `before` must be dotted numbers, such as \"1.3.0\""),
                );
                continue;
            }
            let parts = |version: &str| crate::version::parse_version(version).unwrap_or_default();
            let ordered = |before: &str| crate::version::compare(&parts(before), &parts(&from)).is_gt();
            if !before.as_deref().is_none_or(ordered) {
                self.problem(&["refused_versions"], format!("{which}: `before` must be a later version than `from`"));
                continue;
            }
            let fine = reason.as_deref().is_some_and(|reason| {
                !reason.trim().is_empty() && reason.len() <= MAX_REFUSAL_REASON && !reason.chars().any(char::is_control)
            });
            if !fine {
                self.problem(
                    &["refused_versions"],
                    format!("{which}: `reason` must be one line of 1 to {MAX_REFUSAL_REASON} bytes"),
                );
                continue;
            }
            ranges.push(RefusedVersions { from, before, reason: reason.unwrap_or_default() });
        }
        ranges
    }

    /// The declared codes, each known and listed once.
    fn limitations(&mut self, table: &Table) -> Option<Vec<String>> {
        let codes = self.optional(table, "limitations", Reader::strings)?;
        let mut seen = BTreeSet::new();
        for code in &codes {
            if !limitation::ALL.contains(&code.as_str()) {
                self.problem(
                    &["limitations"],
                    format!("unknown limitation code {code:?}; the codes are {}", limitation::ALL.join(", ")),
                );
            } else if !seen.insert(code.as_str()) {
                self.problem(&["limitations"], format!("limitation {code} is listed twice"));
            }
        }
        Some(codes)
    }
}

/// `^[a-z][a-z0-9_-]{0,31}$`.
fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    id.len() <= MAX_ID_LEN
        && chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A name looked up on `PATH`: no directory part, nothing a shell or a
/// reader could take for two words.
fn plain_executable_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `^[A-Za-z_][A-Za-z0-9_]*$`.
fn variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `^[0-9]+(\.[0-9]+)*$`.
fn dotted_version(version: &str) -> bool {
    version.split('.').all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()))
}

/// The one-line reason of a regex error (its display spans several lines,
/// quoting the anchored pattern).
fn regex_reason(error: &regex::Error) -> String {
    let text = error.to_string();
    text.lines()
        .find_map(|line| line.strip_prefix("error: "))
        .map(str::to_owned)
        .unwrap_or_else(|| text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A value's type with its article, for messages.
pub(super) fn a_type(value: &Value) -> &'static str {
    match value {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date or time",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// The known key closest to a mistyped one, if any is close.
pub(super) fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|candidate| (edit_distance(key, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= 2.max(candidate.len() / 4))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}
