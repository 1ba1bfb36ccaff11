//! A client of the model endpoint fixture for its tests: the fixture
//! started on a free port and killed by pid when dropped, requests over a
//! plain `TcpStream` with `Connection: close`, and responses parsed here,
//! chunked transfer encoding and server-sent events included.

#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(20);

/// A running fixture, killed by pid when dropped.
pub struct Endpoint {
    pub child: Child,
    pub port: u16,
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Endpoint {
    pub fn start() -> Endpoint {
        Endpoint::start_with(&[])
    }

    pub fn start_with(args: &[&str]) -> Endpoint {
        let mut child = Command::new(env!("CARGO_BIN_EXE_panehost-model-endpoint"))
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = stderr.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let port = first
            .trim_end()
            .strip_prefix("listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .parse()
            .unwrap();
        Endpoint { child, port, stderr }
    }

    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream
    }

    pub fn request(&self, method: &str, target: &str, body: Option<&Value>) -> Reply {
        let mut stream = self.connect();
        send(&mut stream, method, target, body.map(|b| b.to_string()).as_deref());
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        Reply::parse(&raw)
    }

    pub fn post(&self, target: &str, body: &Value) -> Reply {
        self.request("POST", target, Some(body))
    }

    pub fn get(&self, target: &str) -> Reply {
        self.request("GET", target, None)
    }

    /// Waits until some stderr line contains `text`, and returns it.
    pub fn wait_for_log(&self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some(line) = self.stderr.lock().unwrap().iter().find(|l| l.contains(text)) {
                return line.clone();
            }
            assert!(Instant::now() < deadline, "no stderr line with {text:?} in {:#?}", self.stderr.lock().unwrap());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn send(stream: &mut TcpStream, method: &str, target: &str, body: Option<&str>) {
    let mut request = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    if let Some(body) = body {
        request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or(""));
    stream.write_all(request.as_bytes()).unwrap();
}

/// A parsed HTTP/1.1 response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn parse(raw: &[u8]) -> Reply {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("no end of headers");
        let head = std::str::from_utf8(&raw[..end]).unwrap();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let mut words = status_line.split(' ');
        assert_eq!(words.next(), Some("HTTP/1.1"), "{status_line}");
        let status = words.next().unwrap().parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|line| {
                let (name, value) = line.split_once(':').unwrap();
                (name.trim().to_ascii_lowercase(), value.trim().to_string())
            })
            .collect();
        let rest = &raw[end + 4..];
        let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
        let body = if chunked { dechunk(rest) } else { rest.to_vec() };
        if let Some(length) = headers.iter().find(|(n, _)| n == "content-length") {
            assert_eq!(body.len(), length.1.parse::<usize>().unwrap());
        }
        Reply { status, headers, body }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    pub fn is_chunked(&self) -> bool {
        self.header("transfer-encoding") == Some("chunked")
    }

    pub fn json(&self) -> Value {
        assert!(self.header("content-type").unwrap_or("").starts_with("application/json"), "{:?}", self.headers);
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as server-sent events: (event name, data) in order.
    pub fn events(&self) -> Vec<(Option<String>, String)> {
        assert_eq!(self.status, 200, "{}", String::from_utf8_lossy(&self.body));
        assert_eq!(self.header("content-type"), Some("text/event-stream"));
        assert!(self.is_chunked(), "a stream is sent chunked: {:?}", self.headers);
        let text = std::str::from_utf8(&self.body).unwrap();
        assert!(text.ends_with("\n\n"), "{text:?}");
        text.split("\n\n")
            .filter(|frame| !frame.is_empty())
            .map(|frame| {
                let mut name = None;
                let mut data = None;
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        assert!(data.is_none(), "one data line per event: {frame:?}");
                        data = Some(v.to_string());
                    } else {
                        panic!("unexpected line {line:?}");
                    }
                }
                (name, data.expect("an event has data"))
            })
            .collect()
    }
}

/// Decodes a chunked transfer-encoded body.
pub fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
        let size_text = std::str::from_utf8(&raw[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        raw = &raw[line_end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[..size]);
        assert_eq!(&raw[size..size + 2], b"\r\n", "chunk ends in CRLF");
        raw = &raw[size + 2..];
    }
}

/// The JSON of each event's data.
pub fn data_json(events: &[(Option<String>, String)]) -> Vec<Value> {
    events.iter().map(|(_, data)| serde_json::from_str(data).unwrap()).collect()
}
