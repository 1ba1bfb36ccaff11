//! `omp`: OMP (Oh My Pi), published on npm as `@oh-my-pi/pi-coding-agent`;
//! its `omp` is a Bun script, run by the npm registry's `bun` installed
//! beside it. Flags checked against `omp --help` of 18.2.3
//! (`adapters/evidence/omp.json`): `-r, --resume=<value>` ("Resume a
//! session (by ID prefix, path, or picker if omitted)"), `-c, --continue`
//! ("Continue previous session"), `--model`, `-p, --print`
//! ("Non-interactive mode: process prompt and exit"), `--no-session`
//! ("Don't save session (ephemeral)") and `--no-tools` ("Disable all
//! built-in tools").
//!
//! Seen live offline (tests/live-records/omp.json, docs/LIVE.md):
//!
//! - each session is `~/.omp/agent/sessions/<directory>/<time>_<uuid>.jsonl`
//!   (under `$PI_CODING_AGENT_DIR/sessions` when that is set), and on exit
//!   it prints "Resume this session with omp --resume <uuid>"; `-r <uuid>`
//!   (`--resume`'s short form) redraws that session, and `-r` alone opens
//!   a picker of the folder's sessions; an id it does not know is refused
//!   (`Session "…" not found.`, exit status 1);
//! - Esc stops a running answer and its request; at the prompt, Ctrl-C
//!   clears the editor and a second one within half a second exits;
//! - at the end of each turn that was not stopped it rings the terminal's
//!   bell (its `completion.notify`, on by default, in a terminal it does
//!   not know to take OSC 9 or OSC 99); the bell comes a few bytes
//!   *before* the frame that draws the answer, so the host records the
//!   end once the output after the bell has settled (as for every terminal
//!   notification), and the turn holds the answer;
//! - its first start opens a setup wizard whose first step signs in to a
//!   provider; a key in the environment (`ANTHROPIC_API_KEY`, …) is
//!   enough (it shows "logged in (env)"), and leaving the wizard (Ctrl-C,
//!   "exit setup") records it as done (`setupVersion` in its settings);
//! - at startup it looks up its newest release and shows a notice ("New
//!   version 18.3.4 is available. Run: omp update"); it installed nothing
//!   by itself. Only its
//!   settings file switches the check off (`startup.checkUpdate: false`
//!   in `~/.omp/agent/config.yml`): no flag or variable does.

use super::{agent_cli, resume, strings};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, ReceiptForm, ReceiptSupport, ReferenceCapture,
    ResumeMode, VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};
use crate::session_store::{SessionEntry, SessionStore};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn (and its request); Ctrl-C at the prompt
        // clears the editor, and exits on a second press.
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("18.2.3".into()) },
        // "fuzzy match: \"opus\", \"gpt-5.2\", or \"openai/gpt-5.2\"".
        model: ModelForm::Optional { flag: "--model".into() },
        // `-r`, the short form its help lists beside `--resume=<value>`;
        // `-r` alone opens its picker of the folder's sessions.
        resume_forms: vec![
            resume(ResumeMode::Reference, &["-r", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
            resume(ResumeMode::InteractivePicker, &["-r"]),
        ],
        // The session's UUID (an "ID prefix" would also do; only whole ids
        // pass).
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/omp.json`, step `resume_reference`).
        references_proven_live: true,
        reference_capture: ReferenceCapture::SessionStore(SessionStore {
            dir: ".omp/agent/sessions".into(),
            moved_by: Some(("PI_CODING_AGENT_DIR".into(), "sessions".into())),
            entry: SessionEntry::File {
                prefix: String::new(),
                suffix: ".jsonl".into(),
                reference_len: Some(36),
                parent: None,
            },
        }),
        // The first start's setup wizard signs in.
        login: LoginForm::InTerminal { args: Vec::new() },
        // Print mode answers once and exits; `--no-session` leaves no
        // session behind for `--continue` to pick, and with `--no-tools` the
        // model is offered no tool at all.
        receipt: ReceiptSupport::OneShot(ReceiptForm {
            args: strings(&["-p", "--no-session", "{read_only}", "{prompt}"]),
            read_only_args: Some(strings(&["--no-tools"])),
        }),
        reads_environment: strings(&[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_OAUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "OPENROUTER_API_KEY",
            "PI_CODING_AGENT_DIR",
        ]),
        // The bell at each turn's end (above).
        completion: CompletionSignal::TerminalNotification,
        limitations: strings(&[limitation::PERMISSION_PROFILE_UNENFORCED]),
        // Published on the npm registry (`adapters/evidence/omp.json` names the same package).
        npm_package: Some("@oh-my-pi/pi-coding-agent".into()),
        ..agent_cli("omp", "OMP", &["omp"], Evidence::CapturedHelp { file: "omp.json".into() })
    }
}
