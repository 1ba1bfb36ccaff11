//! What each CLI needs to talk to the fixture with no dialog in the way
//! (docs/LIVE.md): its configuration files in the scratch HOME, the
//! variables the host must hold for it, and the model to start it with.
//!
//! The host builds every pane's environment from scratch: a variable below
//! reaches the CLI only when its descriptor lists it in `reads_environment`
//! (or sets it itself). The `start` step says which did not.

use std::path::Path;

/// One CLI's needs.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    pub id: &'static str,
    /// `model` of the start request, for CLIs whose model is not set by
    /// their configuration.
    pub model: Option<&'static str>,
    /// Variables the CLI needs from the host's environment.
    pub variables: &'static [&'static str],
    /// What stops the CLI offline, when something does: its interactive
    /// mode insists on the vendor's sign-in (docs/LIVE.md says what was
    /// tried). The steps that need a model are then `blocked`.
    pub wall: Option<Wall>,
    /// The CLI's one-shot mode with the prompt `PING` (the `one_shot`
    /// step), where it is part of the evidence: a CLI blocked in its
    /// interactive mode may or may not reach the fixture here.
    pub one_shot: &'static [&'static str],
    /// Variables for the one-shot run only, besides the host's.
    pub one_shot_variables: &'static [(&'static str, &'static str)],
}

/// The sign-in a CLI insists on before it reaches a prompt.
#[derive(Debug, Clone, Copy)]
pub struct Wall {
    /// Short, for the table's `blocked:` cells (no `: ` in it).
    pub reason: &'static str,
    /// Phrases of its screen (or one-shot output) that show it.
    pub phrases: &'static [&'static str],
}

/// What the CLIs that reach the fixture have: no wall, no one-shot step.
const REACHES: Profile =
    Profile { id: "", model: None, variables: &[], wall: None, one_shot: &[], one_shot_variables: &[] };

/// Stands for the fixture's base URL (`http://127.0.0.1:PORT`) in
/// `one_shot_variables`.
pub const FIXTURE_URL: &str = "{fixture}";

pub const PROFILES: &[Profile] = &[
    // ~/.codex/config.toml names the fixture as its model provider and the
    // key's variable (`env_key`).
    Profile { id: "codex", variables: &["OPENAI_API_KEY"], ..REACHES },
    Profile {
        id: "claude",
        model: Some("test-model"),
        variables: &["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"],
        ..REACHES
    },
    Profile {
        id: "gemini",
        model: Some("test-model"),
        variables: &["GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"],
        ..REACHES
    },
    Profile { id: "qwen", model: Some("test-model"), variables: &["OPENAI_BASE_URL", "OPENAI_API_KEY"], ..REACHES },
    Profile { id: "copilot", variables: &["COPILOT_OFFLINE", "COPILOT_PROVIDER_BASE_URL", "COPILOT_MODEL"], ..REACHES },
    // ~/.config/opencode/opencode.json declares the provider and model.
    Profile { id: "opencode", ..REACHES },
    Profile { id: "grok", model: Some("test-model"), variables: &["GROK_BASE_URL", "GROK_API_KEY"], ..REACHES },
    // ~/.factory/settings.json declares the fixture as a custom model
    // (BYOK) and makes it the default. `droid exec` uses it with no
    // account; the interactive CLI first asks for a Factory sign-in.
    Profile {
        id: "droid",
        wall: Some(Wall { reason: "Factory account sign-in", phrases: &["Please login with your Factory account"] }),
        one_shot: &["exec", "PING"],
        ..REACHES
    },
    // Its documented custom models (BYOK) are added through a wizard that
    // checks them against the signed-in account's catalog.
    Profile {
        id: "qoder",
        wall: Some(Wall { reason: "Qoder account sign-in", phrases: &["Not Login Please Auth", "Not logged in"] }),
        one_shot: &["-p", "PING"],
        ..REACHES
    },
    // ~/.hermes/config.yaml names the fixture as a custom provider and its
    // model (`-m` does not apply to the interactive REPL).
    Profile { id: "hermes", ..REACHES },
    // ~/.kimi/config.toml names the fixture as an OpenAI-compatible
    // provider and its model as the default.
    Profile { id: "kimi", ..REACHES },
    // An Anthropic model through `ANTHROPIC_BASE_URL`; ~/.omp/agent/config.yml
    // makes it the default and skips the first start's setup wizard.
    Profile { id: "omp", variables: &["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"], ..REACHES },
    // ~/.pi/agent/models.json declares the fixture as a provider, and
    // settings.json makes its model the default; `PI_OFFLINE` keeps it
    // from downloading fd and ripgrep at startup.
    Profile { id: "pi", variables: &["PI_OFFLINE"], ..REACHES },
    // ~/.reasonix/config.toml declares the fixture as its one provider,
    // whose key is read from `DEEPSEEK_API_KEY`, and turns off its usage
    // statistics (else it asks about them first).
    Profile { id: "deepseek", variables: &["DEEPSEEK_API_KEY"], ..REACHES },
    // It talks to its vendor's server (`AMP_URL`), not to a model API: the
    // one-shot run is pointed at the fixture to show which requests it makes.
    Profile {
        id: "amp",
        wall: Some(Wall {
            reason: "Amp account sign-in and servers",
            phrases: &["Would you like to log in to Amp", "No API key found", "getUserInfo failed"],
        }),
        one_shot: &["-x", "PING"],
        one_shot_variables: &[("AMP_URL", FIXTURE_URL), ("AMP_API_KEY", "x")],
        ..REACHES
    },
];

/// The profile of `id`.
pub fn profile(id: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.id == id)
}

/// The variables the host runs with, pointing every CLI at the fixture on
/// `port`. The keys are placeholders: the fixture takes any.
pub fn host_variables(port: u16) -> Vec<(String, String)> {
    let base = format!("http://127.0.0.1:{port}");
    let v1 = format!("{base}/v1");
    [
        ("ANTHROPIC_BASE_URL", base.as_str()),
        ("ANTHROPIC_API_KEY", "x"),
        ("OPENAI_BASE_URL", v1.as_str()),
        ("OPENAI_API_KEY", "x"),
        ("GEMINI_API_KEY", "x"),
        ("GOOGLE_GEMINI_BASE_URL", base.as_str()),
        ("COPILOT_OFFLINE", "true"),
        ("COPILOT_PROVIDER_BASE_URL", v1.as_str()),
        ("COPILOT_MODEL", "test-model"),
        ("GROK_BASE_URL", v1.as_str()),
        ("GROK_API_KEY", "x"),
        ("PI_OFFLINE", "1"),
        ("DEEPSEEK_API_KEY", "x"),
    ]
    .iter()
    .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
    .collect()
}

/// Writes every CLI's configuration into `home`, for the working directory
/// `work`, against the fixture on `port`.
pub fn write_configs(home: &Path, work: &Path, port: u16) -> std::io::Result<()> {
    let work = work.display().to_string();
    let json = |value: serde_json::Value| serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
    let write = |relative: &str, text: String| -> std::io::Result<()> {
        let path = home.join(relative);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, text)
    };

    // claude: onboarding done, the key approved ("x" is its last 20
    // characters), the working directory trusted.
    let mut projects = serde_json::Map::new();
    projects.insert(work.clone(), serde_json::json!({"hasTrustDialogAccepted": true}));
    write(
        ".claude.json",
        json(serde_json::json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": ["x"], "rejected": []},
            "projects": projects,
        })),
    )?;

    // codex: the fixture as model provider (the responses API), no update
    // check, the working directory trusted.
    write(
        ".codex/config.toml",
        format!(
            "model = \"test-model\"\nmodel_provider = \"fixture\"\ncheck_for_update_on_startup = false\n\n\
             [model_providers.fixture]\nname = \"fixture\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n\
             env_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n\n[projects.\"{work}\"]\ntrust_level = \"trusted\"\n"
        ),
    )?;

    // gemini: API-key auth, no updates or statistics; the working directory
    // trusted (else "Do you trust the files in this folder?").
    write(
        ".gemini/settings.json",
        json(serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
            "privacy": {"usageStatisticsEnabled": false},
        })),
    )?;
    let mut trusted = serde_json::Map::new();
    trusted.insert(work.clone(), serde_json::json!("TRUST_FOLDER"));
    write(".gemini/trustedFolders.json", json(serde_json::Value::Object(trusted)))?;

    // qwen: the OpenAI-compatible auth (else the "Select Authentication
    // Method" dialog; docs/LIVE.md's one-shot used `--auth-type openai`,
    // which the adapter does not pass).
    write(".qwen/settings.json", json(serde_json::json!({"security": {"auth": {"selectedType": "openai"}}})))?;

    // copilot: the working directory trusted (else "Confirm folder trust").
    write(".copilot/config.json", json(serde_json::json!({"trustedFolders": [work.clone()]})))?;

    // opencode: the fixture as an OpenAI-compatible provider, and its model.
    write(
        ".config/opencode/opencode.json",
        json(serde_json::json!({
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": false,
            "provider": {"fixture": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fixture",
                "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "x"},
                "models": {"test-model": {"name": "test-model"}},
            }},
            "model": "fixture/test-model",
        })),
    )?;
    // droid: the fixture as a custom model (BYOK), the default of every
    // session (droid exec takes it; the interactive CLI has no model flag).
    write(
        ".factory/settings.json",
        json(serde_json::json!({
            "customModels": [{
                "model": "test-model",
                "displayName": "Fixture",
                "baseUrl": format!("http://127.0.0.1:{port}/v1"),
                "apiKey": "x",
                "provider": "generic-chat-completion-api",
                "maxOutputTokens": 4096,
            }],
            "sessionDefaultSettings": {"model": "custom:test-model"},
        })),
    )?;
    // hermes: the fixture as a custom OpenAI-compatible provider.
    write(
        ".hermes/config.yaml",
        format!(
            "model:\n  default: test-model\n  provider: custom\n  base_url: http://127.0.0.1:{port}/v1\n  api_key: x\n"
        ),
    )?;
    // kimi: the fixture as an OpenAI-compatible provider (`openai_legacy`:
    // chat completions) and a model of it as the default; no telemetry.
    write(
        ".kimi/config.toml",
        format!(
            "default_model = \"fixture\"\ntelemetry = false\n\n[providers.fixture]\ntype = \"openai_legacy\"\n\
             base_url = \"http://127.0.0.1:{port}/v1\"\napi_key = \"x\"\n\n[models.fixture]\nprovider = \"fixture\"\n\
             model = \"test-model\"\nmax_context_size = 128000\n"
        ),
    )?;
    // omp: the setup wizard done (its version), no update check at
    // startup, and an Anthropic model (reached through
    // `ANTHROPIC_BASE_URL`) as the default.
    write(
        ".omp/agent/config.yml",
        "setupVersion: 2\nstartup:\n  checkUpdate: false\nmodelRoles:\n  default: anthropic/claude-sonnet-4-5\n"
            .to_owned(),
    )?;
    // pi: the fixture as an OpenAI-compatible provider (chat completions,
    // no `developer` role or reasoning effort), its model the default.
    write(
        ".pi/agent/models.json",
        json(serde_json::json!({"providers": {"fixture": {
            "baseUrl": format!("http://127.0.0.1:{port}/v1"),
            "api": "openai-completions",
            "apiKey": "x",
            "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
            "models": [{"id": "test-model"}],
        }}})),
    )?;
    write(
        ".pi/agent/settings.json",
        json(serde_json::json!({"defaultProvider": "fixture", "defaultModel": "test-model"})),
    )?;
    // deepseek: the fixture as an OpenAI-compatible provider (chat
    // completions), the default; no usage statistics.
    write(
        ".reasonix/config.toml",
        format!(
            "default_model = \"fixture\"\n\n[[providers]]\nname = \"fixture\"\nkind = \"openai\"\n\
             base_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"test-model\"\napi_key_env = \"DEEPSEEK_API_KEY\"\n\n\
             [telemetry]\ncli_metrics = \"off\"\n"
        ),
    )?;
    std::fs::create_dir_all(&work)?;
    Ok(())
}
