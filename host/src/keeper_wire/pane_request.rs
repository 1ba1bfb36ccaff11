//! A pane request: what the host asks a keeper to start, on the keeper's
//! stdin. Framed as a 4-byte big-endian length, then that many bytes (at
//! most [`MAX_PANE_REQUEST`]) of words, each ended by a NUL byte:
//! `--socket PATH --cols C --rows R --cwd DIR [--cgroup DIR]
//! [--env NAME=VALUE]... -- PROGRAM [ARGS...]`.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The largest pane request (its words and their NULs).
pub const MAX_PANE_REQUEST: usize = 1 << 20;

/// The smallest terminal dimension a pane request may give.
pub const MIN_DIMENSION: u16 = 2;
/// The largest terminal dimension a pane request may give (the bounds of a
/// pane's size; the host checks the cells too).
pub const MAX_DIMENSION: u16 = 1000;

/// The words a pane request is made of, for error messages.
pub const PANE_USAGE: &str =
    "a pane request is --socket PATH --cols C --rows R --cwd DIR [--cgroup DIR] [--env NAME=VALUE]... -- PROGRAM [ARGS...]";

/// One pane the host asks a keeper to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneRequest {
    /// Where the keeper listens for this pane's host.
    pub socket: PathBuf,
    /// The PTY's width in columns.
    pub cols: u16,
    /// The PTY's height in rows.
    pub rows: u16,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// The control group (cgroup v2) directory to start the child in, if
    /// the pane has one: an absolute path.
    pub cgroup: Option<PathBuf>,
    /// The child's whole environment, in order.
    pub env: Vec<(OsString, OsString)>,
    /// The program to run in the PTY.
    pub program: OsString,
    /// The program's arguments (not including its name).
    pub program_args: Vec<OsString>,
}

impl PaneRequest {
    /// The request as the keeper reads it: its length, then its words.
    ///
    /// # Errors
    /// A sentence when a word holds a NUL byte or the words are over
    /// [`MAX_PANE_REQUEST`].
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        let (cols, rows) = (self.cols.to_string(), self.rows.to_string());
        let mut body = Vec::new();
        let mut word = |word: &[u8]| -> Result<(), String> {
            if word.contains(&0) {
                return Err(format!("{:?} holds a NUL byte", String::from_utf8_lossy(word)));
            }
            body.extend_from_slice(word);
            body.push(0);
            Ok(())
        };
        for (option, value) in [
            ("--socket", self.socket.as_os_str()),
            ("--cols", OsStr::new(&cols)),
            ("--rows", OsStr::new(&rows)),
            ("--cwd", self.cwd.as_os_str()),
        ] {
            word(option.as_bytes())?;
            word(value.as_bytes())?;
        }
        if let Some(cgroup) = &self.cgroup {
            word(b"--cgroup")?;
            word(cgroup.as_os_str().as_bytes())?;
        }
        for (name, value) in &self.env {
            word(b"--env")?;
            word(&[name.as_bytes(), b"=", value.as_bytes()].concat())?;
        }
        word(b"--")?;
        word(self.program.as_bytes())?;
        for arg in &self.program_args {
            word(arg.as_bytes())?;
        }
        if body.len() > MAX_PANE_REQUEST {
            return Err(format!(
                "the command line and environment take {} bytes, over the limit of {MAX_PANE_REQUEST}",
                body.len()
            ));
        }
        let length = u32::try_from(body.len()).map_err(|err| err.to_string())?;
        let mut request = length.to_be_bytes().to_vec();
        request.append(&mut body);
        Ok(request)
    }

    /// Parses a request's words. `--socket`, `--cols`, `--rows` and `--cwd`
    /// appear exactly once each, `--cgroup` at most once (an absolute path)
    /// and `--env` any number of times, in any order, before `--`;
    /// everything after `--` is the child's argv. The socket must be a file
    /// directly inside `sockets`.
    ///
    /// # Errors
    /// A sentence naming what is wrong.
    pub fn parse(mut words: impl Iterator<Item = OsString>, sockets: &Path) -> Result<PaneRequest, String> {
        let mut socket = None;
        let mut cols = None;
        let mut rows = None;
        let mut cwd = None;
        let mut cgroup = None;
        let mut env = Vec::new();
        loop {
            let Some(word) = words.next() else {
                return Err(format!("missing `--` and PROGRAM; {PANE_USAGE}"));
            };
            if word == "--" {
                break;
            }
            let name = word.to_string_lossy().into_owned();
            let value = words.next().ok_or_else(|| format!("{name} needs a value; {PANE_USAGE}"))?;
            let slot_taken = match name.as_str() {
                "--socket" => socket.replace(PathBuf::from(value)).is_some(),
                "--cwd" => cwd.replace(PathBuf::from(value)).is_some(),
                "--cgroup" => cgroup.replace(absolute(&name, value)?).is_some(),
                "--cols" => cols.replace(dimension(&name, &value)?).is_some(),
                "--rows" => rows.replace(dimension(&name, &value)?).is_some(),
                "--env" => {
                    env.push(variable(&value)?);
                    false
                }
                _ => return Err(format!("unknown option {name}; {PANE_USAGE}")),
            };
            if slot_taken {
                return Err(format!("{name} given twice"));
            }
        }
        let program = words.next().ok_or_else(|| format!("missing PROGRAM after `--`; {PANE_USAGE}"))?;
        let missing = |name: &str| format!("missing {name}; {PANE_USAGE}");
        let socket = socket.ok_or_else(|| missing("--socket"))?;
        if socket.parent() != Some(sockets) || socket.file_name().is_none() {
            return Err(format!("the socket {} is not a file in {}", socket.display(), sockets.display()));
        }
        Ok(PaneRequest {
            socket,
            cols: cols.ok_or_else(|| missing("--cols"))?,
            rows: rows.ok_or_else(|| missing("--rows"))?,
            cwd: cwd.ok_or_else(|| missing("--cwd"))?,
            cgroup,
            env,
            program,
            program_args: words.collect(),
        })
    }
}

/// A terminal dimension: a whole number from [`MIN_DIMENSION`] to
/// [`MAX_DIMENSION`].
fn dimension(name: &str, value: &OsStr) -> Result<u16, String> {
    value
        .to_str()
        .and_then(|text| text.parse::<u16>().ok())
        .filter(|n| (MIN_DIMENSION..=MAX_DIMENSION).contains(n))
        .ok_or_else(|| {
            format!("{name} must be a number from {MIN_DIMENSION} to {MAX_DIMENSION}, not {}", value.to_string_lossy())
        })
}

/// An absolute path.
fn absolute(name: &str, value: OsString) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(format!("{name} must be an absolute path, not {}", path.display()))
    }
}

/// `NAME=VALUE`, split at the first `=`; the name may not be empty.
fn variable(value: &OsStr) -> Result<(OsString, OsString), String> {
    let bytes = value.as_bytes();
    match bytes.iter().position(|&byte| byte == b'=') {
        Some(equals) if equals > 0 => {
            Ok((OsStr::from_bytes(&bytes[..equals]).to_owned(), OsStr::from_bytes(&bytes[equals + 1..]).to_owned()))
        }
        _ => Err(format!("--env needs NAME=VALUE, not {}", value.to_string_lossy())),
    }
}

/// The words of a request's body; every word must end with a NUL.
///
/// # Errors
/// A sentence when the body does not end with a NUL.
pub fn words(body: &[u8]) -> Result<Vec<OsString>, String> {
    let Some(words) = body.strip_suffix(b"\0") else {
        return Err("a pane request must end with a NUL byte".to_owned());
    };
    Ok(words.split(|&byte| byte == 0).map(|word| OsString::from_vec(word.to_vec())).collect())
}

/// The length prefix announced more than [`MAX_PANE_REQUEST`] bytes: the
/// stream cannot be followed past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTooLong(pub usize);

/// Splits what a keeper's stdin delivers into pane requests' bodies.
#[derive(Debug, Default)]
pub struct PaneRequestReader {
    pending: Vec<u8>,
}

impl PaneRequestReader {
    /// Adds bytes read from stdin and returns the bodies of the requests
    /// they complete, in order, and then, if a length prefix is over the
    /// limit, that length: nothing after it can be read.
    pub fn feed(&mut self, bytes: &[u8]) -> (Vec<Vec<u8>>, Option<RequestTooLong>) {
        self.pending.extend_from_slice(bytes);
        let mut bodies = Vec::new();
        let mut start = 0;
        while let Some(prefix) = self.pending.get(start..start + 4) {
            let length = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
            if length > MAX_PANE_REQUEST {
                self.pending = Vec::new();
                return (bodies, Some(RequestTooLong(length)));
            }
            let Some(body) = self.pending.get(start + 4..start + 4 + length) else {
                break;
            };
            bodies.push(body.to_vec());
            start += 4 + length;
        }
        self.pending.drain(..start);
        if self.pending.is_empty() {
            // A request can be large; an idle keeper keeps no buffer.
            self.pending = Vec::new();
        }
        (bodies, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(words: &[&str]) -> Result<PaneRequest, String> {
        PaneRequest::parse(words.iter().map(OsString::from), Path::new("/d"))
    }

    fn request(env: &[(&str, &str)], args: &[&str]) -> PaneRequest {
        PaneRequest {
            socket: PathBuf::from("/d/p.sock"),
            cols: 80,
            rows: 24,
            cwd: PathBuf::from("/w"),
            cgroup: None,
            env: env.iter().map(|(name, value)| ((*name).into(), (*value).into())).collect(),
            program: "sh".into(),
            program_args: args.iter().map(OsString::from).collect(),
        }
    }

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut framed = u32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
        framed.extend_from_slice(body);
        framed
    }

    #[test]
    fn an_encoded_request_is_a_length_and_nul_ended_words_that_parse_back() {
        let sent = request(&[("A", "1"), ("B", "2=3")], &["-c", "x"]);
        let encoded = sent.encode().unwrap();
        let (length, body) = encoded.split_at(4);
        assert_eq!(u32::from_be_bytes(length.try_into().unwrap()) as usize, body.len());
        let expected = [
            "--socket",
            "/d/p.sock",
            "--cols",
            "80",
            "--rows",
            "24",
            "--cwd",
            "/w",
            "--env",
            "A=1",
            "--env",
            "B=2=3",
            "--",
            "sh",
            "-c",
            "x",
        ];
        assert_eq!(body, expected.map(|word| format!("{word}\0")).concat().as_bytes());
        let (bodies, too_long) = PaneRequestReader::default().feed(&encoded);
        assert_eq!(too_long, None);
        let received = PaneRequest::parse(words(&bodies[0]).unwrap().into_iter(), Path::new("/d")).unwrap();
        assert_eq!(received, sent);
    }

    #[test]
    fn nul_bytes_and_oversized_requests_are_not_encoded() {
        assert!(request(&[], &["a\0b"]).encode().unwrap_err().contains("NUL"));
        let huge = "x".repeat(MAX_PANE_REQUEST);
        let oversized = request(&[("BIG", &huge)], &[]).encode().unwrap_err();
        assert!(oversized.contains("over the limit"), "{oversized}");
    }

    #[test]
    fn parses_a_full_pane_request_in_any_order() {
        let request = parse_strs(&[
            "--rows", "24", "--socket", "/d/s", "--env", "A=1=2", "--cwd", "/w", "--cols", "80", "--env", "B=", "--",
            "sh", "-c", "x",
        ])
        .unwrap();
        assert_eq!(request.socket, PathBuf::from("/d/s"));
        assert_eq!((request.cols, request.rows), (80, 24));
        assert_eq!(request.cwd, PathBuf::from("/w"));
        assert_eq!(request.env, vec![("A".into(), "1=2".into()), ("B".into(), "".into())]);
        assert_eq!(request.program, "sh");
        assert_eq!(request.program_args, vec![OsString::from("-c"), OsString::from("x")]);
        assert_eq!(request.cgroup, None);
    }

    #[test]
    fn a_control_group_is_an_absolute_path_given_once() {
        let words = |cgroup: &[&'static str]| {
            let mut words = vec!["--socket", "/d/s", "--cols", "80", "--rows", "24", "--cwd", "/"];
            words.extend_from_slice(cgroup);
            words.extend(["--", "sh"]);
            parse_strs(&words)
        };
        let given = words(&["--cgroup", "/sys/fs/cgroup/panehost/p1.1"]).unwrap();
        assert_eq!(given.cgroup, Some(PathBuf::from("/sys/fs/cgroup/panehost/p1.1")));
        let encoded = given.encode().unwrap();
        assert_eq!(PaneRequest::parse(super::words(&encoded[4..]).unwrap().into_iter(), Path::new("/d")), Ok(given));
        assert!(words(&["--cgroup", "panehost/p1.1"]).is_err());
        assert!(words(&["--cgroup", "/a", "--cgroup", "/b"]).is_err());
    }

    #[test]
    fn refuses_bad_pane_requests() {
        assert!(parse_strs(&["--socket", "/d/s", "--cols", "80", "--rows", "24", "--cwd", "/"]).is_err());
        assert!(parse_strs(&["--socket", "/d/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--"]).is_err());
        for cols in ["0", "1", "1001", "65535", "99999"] {
            let words = ["--socket", "/d/s", "--cols", cols, "--rows", "24", "--cwd", "/", "--", "sh"];
            assert!(parse_strs(&words).is_err(), "--cols {cols}");
        }
        let smallest = parse_strs(&["--socket", "/d/s", "--cols", "2", "--rows", "2", "--cwd", "/", "--", "sh"]);
        assert_eq!(smallest.map(|request| (request.cols, request.rows)), Ok((2, 2)));
        let largest = parse_strs(&["--socket", "/d/s", "--cols", "1000", "--rows", "1000", "--cwd", "/", "--", "sh"]);
        assert!(largest.is_ok());
        assert!(parse_strs(&["--socket", "/d/s", "--cols", "80", "--cwd", "/", "--", "sh"]).is_err());
        assert!(parse_strs(&[
            "--socket", "/d/s", "--socket", "/d/t", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"
        ])
        .is_err());
        assert!(parse_strs(&["--bogus", "1", "--", "sh"]).is_err());
        let env = ["--cols", "80", "--rows", "24", "--cwd", "/", "--env"];
        assert!(parse_strs(&[&["--socket", "/d/s"], &env[..], &["=x", "--", "sh"]].concat()).is_err());
        assert!(parse_strs(&[&["--socket", "/d/s"], &env[..], &["NOEQUALS", "--", "sh"]].concat()).is_err());
        let elsewhere = parse_strs(&["--socket", "/e/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"]);
        assert!(elsewhere.unwrap_err().contains("not a file in /d"));
        let nested = parse_strs(&["--socket", "/d/x/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"]);
        assert!(nested.is_err());
    }

    #[test]
    fn splits_requests_across_reads() {
        let mut reader = PaneRequestReader::default();
        let stream = [frame(b"a\0bc\0"), frame(b""), frame(b"d\0")].concat();
        let (first, rest) = stream.split_at(6);
        assert_eq!(reader.feed(first), (vec![], None));
        assert_eq!(reader.feed(rest), (vec![b"a\0bc\0".to_vec(), vec![], b"d\0".to_vec()], None));
        assert!(reader.pending.is_empty());
    }

    #[test]
    fn stops_at_a_length_over_the_limit_after_the_requests_before_it() {
        let mut reader = PaneRequestReader::default();
        let too_long = u32::try_from(MAX_PANE_REQUEST + 1).unwrap().to_be_bytes();
        let stream = [frame(b"a\0"), too_long.to_vec(), frame(b"b\0")].concat();
        assert_eq!(reader.feed(&stream), (vec![b"a\0".to_vec()], Some(RequestTooLong(MAX_PANE_REQUEST + 1))));
    }

    #[test]
    fn words_end_with_nul() {
        assert_eq!(words(b"--cols\080\0\0").unwrap(), vec![OsString::from("--cols"), "80".into(), "".into()]);
        assert!(words(b"--cols\080").is_err());
        assert_eq!(words(b"").unwrap_err(), "a pane request must end with a NUL byte");
    }
}
