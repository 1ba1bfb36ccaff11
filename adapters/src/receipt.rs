//! The completion receipt: proof that a runtime, as installed and signed in,
//! completes a turn and follows an instruction exactly.
//!
//! The probe asks the CLI's one-shot mode (see
//! [`ReceiptForm`](crate::descriptor::ReceiptForm)), inside the read-only
//! boundary and in a scratch directory it creates, for exactly one JSON
//! object, `{"panehost_receipt":"<32 hex digits>"}`, whose value is fresh
//! for every probe. The answer passes when exactly one line of the CLI's
//! standard output is a JSON object with that key, and that object is
//! exactly the one asked for. Nothing from an earlier probe or from the
//! model's training can produce a passing answer.

use crate::launch_plan::LaunchPlan;
use crate::probe::{describe_exit, run_captured, ProbeExit, ProbeRun};
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// How long a receipt probe may take: a real turn against a provider.
pub const RECEIPT_TIMEOUT: Duration = Duration::from_millis(panehost_ipc::RECEIPT_TIMEOUT_MS);

/// How long a passed receipt counts for readiness.
pub const RECEIPT_VALIDITY: Duration = Duration::from_secs(24 * 60 * 60);

/// The one key of the object the probe asks for.
pub const RECEIPT_KEY: &str = "panehost_receipt";

/// A fresh request for a receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// 32 lowercase hex digits from the system's random source.
    pub nonce: String,
}

impl Challenge {
    /// A challenge with a nonce from `/dev/urandom`.
    ///
    /// # Errors
    /// Fails when the random source cannot be read.
    pub fn fresh() -> std::io::Result<Challenge> {
        let mut bytes = [0u8; 16];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Challenge { nonce: bytes.iter().map(|byte| format!("{byte:02x}")).collect() })
    }

    /// The object a passing answer consists of.
    pub fn expected(&self) -> String {
        format!("{{\"{RECEIPT_KEY}\":\"{}\"}}", self.nonce)
    }

    /// The prompt: one instruction, no tools, no files.
    pub fn prompt(&self) -> String {
        format!(
            "Reply with exactly this JSON object and nothing else: no code fence, no other text, and no tools. {}",
            self.expected()
        )
    }

    /// Checks a CLI's standard output against the challenge.
    ///
    /// # Errors
    /// Says what was wrong: no object with the key, more than one, another
    /// value, or other keys.
    pub fn check(&self, stdout: &str) -> Result<(), String> {
        let objects: Vec<serde_json::Map<String, serde_json::Value>> = stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line.trim()).ok())
            .filter_map(|value| match value {
                serde_json::Value::Object(object) if object.contains_key(RECEIPT_KEY) => Some(object),
                _ => None,
            })
            .collect();
        let object = match objects.as_slice() {
            [] => {
                let shown: String = stdout.trim().chars().take(200).collect();
                return Err(format!("no line of the answer is a JSON object with {RECEIPT_KEY:?}; it was: {shown:?}"));
            }
            [object] => object,
            more => return Err(format!("the answer holds {} objects with {RECEIPT_KEY:?}, not one", more.len())),
        };
        if object.len() != 1 {
            let keys: Vec<&str> = object.keys().map(String::as_str).collect();
            return Err(format!("the object has other keys besides {RECEIPT_KEY:?}: {keys:?}"));
        }
        match &object[RECEIPT_KEY] {
            serde_json::Value::String(value) if *value == self.nonce => Ok(()),
            other => Err(format!("{RECEIPT_KEY} was {other}, not this probe's value {:?}", self.nonce)),
        }
    }
}

/// What a receipt probe saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeResult {
    /// Whether the answer passed.
    pub passed: bool,
    /// What was seen, for people.
    pub detail: String,
    /// How long the run took.
    pub elapsed: Duration,
}

/// Runs a receipt plan (from [`crate::launcher::plan_receipt`]) in
/// `scratch` (the plan's working directory, made by the caller) and checks
/// the answer. Blocking, up to `timeout`; the plan's whole process group is
/// ended when it returns.
pub fn take(plan: &LaunchPlan, challenge: &Challenge, timeout: Duration) -> ProbeResult {
    let started = Instant::now();
    let mut command = Command::new(&plan.program);
    command
        .args(&plan.args)
        .env_clear()
        .envs(plan.env.iter().map(|(name, value)| (name, value)))
        .current_dir(&plan.cwd);
    let outcome = run_captured(command, timeout);
    let elapsed = started.elapsed();
    let (passed, detail) = match outcome {
        Err(err) => (false, err.to_string()),
        Ok(ProbeRun { exit: ProbeExit::TimedOut, .. }) => (false, format!("no answer within {}s", timeout.as_secs())),
        Ok(run) => {
            let status = describe_exit(run.exit);
            match challenge.check(&run.stdout) {
                Ok(()) if run.succeeded() => (true, format!("answered with the expected object ({status})")),
                Ok(()) => (false, format!("answered with the expected object but ended with {status}")),
                Err(mismatch) if run.succeeded() => (false, mismatch),
                Err(mismatch) => {
                    let stderr: String = run.stderr.trim().chars().take(300).collect();
                    (false, format!("{status}; {mismatch}; standard error: {stderr:?}"))
                }
            }
        }
    };
    ProbeResult { passed, detail, elapsed }
}

/// Makes a private scratch directory under `parent` for one probe.
///
/// # Errors
/// Fails when the directory cannot be made.
pub fn scratch_dir(parent: &Path, challenge: &Challenge) -> std::io::Result<std::path::PathBuf> {
    let dir = parent.join(format!("receipt-{}", &challenge.nonce[..12]));
    std::fs::create_dir_all(parent)?;
    std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700).create(&dir)?;
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn challenge() -> Challenge {
        Challenge { nonce: "0123456789abcdef0123456789abcdef".into() }
    }

    #[test]
    fn fresh_challenges_differ() {
        let (one, two) = (Challenge::fresh().unwrap(), Challenge::fresh().unwrap());
        assert_ne!(one, two);
        assert_eq!(one.nonce.len(), 32);
        assert!(one.prompt().contains(&one.expected()));
    }

    #[test]
    fn exactly_the_object_asked_for_passes_on_a_line_of_its_own() {
        let challenge = challenge();
        assert_eq!(challenge.check(&format!("{}\n", challenge.expected())), Ok(()));
        // Other lines a CLI prints around the answer do not matter.
        assert_eq!(
            challenge.check(&format!("Thinking...\n  {}  \nResume with --resume=x\n", challenge.expected())),
            Ok(())
        );
        // Whitespace inside the object does not either.
        assert_eq!(challenge.check(&format!("{{ \"{RECEIPT_KEY}\" : \"{}\" }}", challenge.nonce)), Ok(()));
    }

    #[test]
    fn anything_else_fails_and_says_why() {
        let challenge = challenge();
        let wrong_value = challenge.check(&format!("{{\"{RECEIPT_KEY}\":\"00000000000000000000000000000000\"}}"));
        assert!(wrong_value.unwrap_err().contains("not this probe's value"));
        let two = challenge.check(&format!("{}\n{}\n", challenge.expected(), challenge.expected()));
        assert!(two.unwrap_err().contains("2 objects"));
        let extra = challenge.check(&format!("{{\"{RECEIPT_KEY}\":\"{}\",\"more\":1}}", challenge.nonce));
        assert!(extra.unwrap_err().contains("other keys"));
        let fenced = challenge.check(&format!("```json {} ```", challenge.expected()));
        assert!(fenced.unwrap_err().contains("no line"));
        assert!(challenge.check("").unwrap_err().contains("no line"));
        let number = challenge.check(&format!("{{\"{RECEIPT_KEY}\":7}}"));
        assert!(number.unwrap_err().contains("was 7"));
    }
}
