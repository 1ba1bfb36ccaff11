//! The model endpoint fixture: started with `--port 0`, its port read from
//! its first line, its log (stderr) kept in a file and read back to see what
//! reached the model and when a client went away.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A running fixture, ended by its pid when stopped or dropped.
#[derive(Debug)]
pub struct Endpoint {
    child: Option<Child>,
    /// Kept open so that the fixture never writes to a closed pipe.
    _stdout: Option<BufReader<ChildStdout>>,
    pub port: u16,
    log: PathBuf,
}

/// One request as the log tells it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoggedRequest {
    pub number: u64,
    /// The prompt as the log quotes it (cut at 120 characters).
    pub prompt: Option<String>,
    /// The rule that answered: `match "PING"`, `echo`, ….
    pub rule: Option<String>,
    /// How it ended: `stream complete (6 events)`, `client disconnected
    /// after 11 of 125 events; stopped streaming`, ….
    pub end: Option<String>,
}

impl LoggedRequest {
    pub fn disconnected(&self) -> bool {
        self.end.as_deref().is_some_and(|end| end.starts_with("client disconnected"))
    }
}

impl Endpoint {
    /// Starts `bin --port 0`, with `--script SCRIPT` when given, its log in `log`.
    pub fn start(bin: &Path, log: &Path, script: Option<&Path>) -> Result<Endpoint, String> {
        let log_file = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let mut command = Command::new(bin);
        if let Some(script) = script {
            command.arg("--script").arg(script);
        }
        let mut child = command
            .args(["--port", "0"])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let stdout = child.stdout.take().ok_or("the fixture has no stdout")?;
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let result = reader.read_line(&mut line).map(|_| line);
            let _ = sender.send((result, reader));
        });
        let mut endpoint = Endpoint { child: Some(child), _stdout: None, port: 0, log: log.to_path_buf() };
        let (line, reader) = match receiver.recv_timeout(Duration::from_secs(20)) {
            Ok((Ok(line), reader)) => (line, reader),
            Ok((Err(e), _)) => return Err(format!("cannot read the fixture's first line: {e}")),
            Err(_) => return Err("the fixture printed nothing within 20 s".into()),
        };
        endpoint._stdout = Some(reader);
        let port = line
            .trim()
            .rsplit(':')
            .next()
            .and_then(|p| p.trim_end_matches('/').parse::<u16>().ok())
            .filter(|_| line.starts_with("listening on http://"))
            .ok_or(format!("the fixture's first line is not `listening on http://127.0.0.1:PORT`: {line:?}"))?;
        endpoint.port = port;
        Ok(endpoint)
    }

    /// The fixture's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// A mark: what the log holds now. Later reads look only past it.
    pub fn mark(&self) -> u64 {
        std::fs::metadata(&self.log).map(|m| m.len()).unwrap_or(0)
    }

    /// The log's lines after `mark`.
    pub fn lines_since(&self, mark: u64) -> Vec<String> {
        let bytes = std::fs::read(&self.log).unwrap_or_default();
        let start = (mark as usize).min(bytes.len());
        String::from_utf8_lossy(&bytes[start..]).lines().map(str::to_owned).collect()
    }

    /// The requests logged after `mark`, by number.
    pub fn requests_since(&self, mark: u64) -> Vec<LoggedRequest> {
        let mut requests: BTreeMap<u64, LoggedRequest> = BTreeMap::new();
        for line in self.lines_since(mark) {
            let Some(rest) = line.strip_prefix('#') else { continue };
            let Some((number, text)) = rest.split_once(' ') else { continue };
            let Ok(number) = number.parse::<u64>() else { continue };
            let request =
                requests.entry(number).or_insert_with(|| LoggedRequest { number, ..LoggedRequest::default() });
            if text.starts_with("prompt ") {
                if let Some(arrow) = text.rfind(" -> ") {
                    request.prompt = Some(text["prompt ".len()..arrow].to_owned());
                    let rule = &text[arrow + 4..];
                    let rule = rule.rfind(" (").map(|cut| &rule[..cut]).unwrap_or(rule);
                    request.rule = Some(rule.to_owned());
                }
            } else if text.starts_with("stream complete") || text.starts_with("client disconnected") {
                request.end = Some(text.to_owned());
            }
        }
        requests.into_values().collect()
    }

    /// The requests after `mark` that the built-in rule for `word` answered.
    pub fn matching_since(&self, mark: u64, word: &str) -> Vec<LoggedRequest> {
        let rule = format!("match {word:?}");
        self.requests_since(mark).into_iter().filter(|r| r.rule.as_deref() == Some(rule.as_str())).collect()
    }

    /// Ends the fixture by its pid.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop();
    }
}
