//! `one_shot`: the CLI's one-shot mode with the prompt `PING`, run beside
//! the host (the scratch HOME and working directory, the host's PATH and
//! the fixture's variables, plus the profile's own), for the CLIs whose
//! profile names one. It is evidence for a CLI that its interactive mode
//! cannot give offline: whether a prompt reaches the fixture at all, and
//! if not, what the CLI printed and which requests it made instead.
//!
//! It passes when `PONG` is in the output and a `PING` request reached the
//! fixture; otherwise it is `blocked` for a profile with a sign-in wall
//! (the output is the evidence), else a failure.

use crate::outcome::Outcome;
use crate::pane::tail;
use crate::procs;
use crate::profiles::FIXTURE_URL;
use crate::run::{Ctx, State};
use panehost_adapters::descriptor::Executable;
use std::process::Stdio;
use std::time::Duration;

/// How long the one-shot run may take.
const LIMIT: Duration = Duration::from_secs(45);

pub async fn run(ctx: &Ctx<'_>, state: &State) -> Outcome {
    let Some(program) = state.info.as_ref().and_then(|info| info.path.clone()) else {
        return Outcome::fail("the host did not say where the CLI is");
    };
    let name = match &ctx.descriptor.executable {
        Executable::Named { names, .. } => names.first().cloned().unwrap_or_else(|| ctx.descriptor.id.clone()),
        _ => ctx.descriptor.id.clone(),
    };
    let args = ctx.profile.one_shot;
    let fixture = format!("http://127.0.0.1:{}", ctx.endpoint.port);
    let extra: Vec<(String, String)> = ctx
        .profile
        .one_shot_variables
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.replace(FIXTURE_URL, &fixture)))
        .collect();
    let shown_extra: Vec<String> = ctx
        .profile
        .one_shot_variables
        .iter()
        .map(|(k, v)| format!("{k}={}", v.replace(FIXTURE_URL, "<fixture>")))
        .collect();
    let command = format!(
        "{}{name} {}",
        if shown_extra.is_empty() { String::new() } else { format!("{} ", shown_extra.join(" ")) },
        args.iter()
            .map(|a| if a.contains(' ') { format!("{a:?}") } else { (*a).to_owned() })
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mark = ctx.endpoint.mark();
    let mut command_line = tokio::process::Command::new(&program);
    command_line
        .args(args)
        .env_clear()
        .envs(ctx.host.environment())
        .envs(extra)
        .env("TERM", "dumb")
        .current_dir(&ctx.work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = match command_line.spawn() {
        Ok(child) => child,
        Err(error) => return Outcome::fail(format!("`{command}`: cannot run it: {error}")),
    };
    let pid = child.id().unwrap_or(0);
    let waited = tokio::time::timeout(LIMIT, child.wait_with_output()).await;
    // Whatever it left in its process group is ended by pid.
    let left = procs::group(pid);
    if !left.is_empty() {
        procs::end(&left).await;
    }
    let (status, output) = match waited {
        Ok(Ok(output)) => {
            let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stderr));
            (format!("{}", output.status), text)
        }
        Ok(Err(error)) => return Outcome::fail(format!("`{command}`: {error}")),
        Err(_) => (format!("still running after {} s, ended", LIMIT.as_secs()), String::new()),
    };
    let printed = tail(&strip_escapes(&output), 6);
    let requests: Vec<String> = ctx
        .endpoint
        .lines_since(mark)
        .into_iter()
        .filter(|line| {
            line.starts_with('#') && (line.contains(" POST ") || line.contains(" GET ") || line.contains(" 404 "))
        })
        .take(8)
        .collect();
    let seen = if requests.is_empty() {
        "the fixture saw no request".to_owned()
    } else {
        format!("the fixture logged: {}", requests.join(" / "))
    };
    let reached = !ctx.endpoint.matching_since(mark, "PING").is_empty();
    let detail = format!("`{command}` ({status}) printed {printed:?}; {seen}");
    if reached && output.contains("PONG") {
        return Outcome::pass(detail);
    }
    match ctx.profile.wall {
        Some(wall) => Outcome::blocked(wall.reason, detail),
        None => Outcome::fail(detail),
    }
}

/// `text` without ANSI escape sequences.
fn strip_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' || (c == '\x1b' && chars.peek() == Some(&'\\')) {
                        chars.next_if_eq(&'\\');
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}
