//! Requests: what a client asks of the host.
//!
//! Each request is one variant of [`Request`], wrapped in a [`RequestFrame`]
//! that carries the client's id for it. In JSON a frame reads
//! `{"id": 7, "request": {"inspect": {"pane": "p1"}}}`. Every variant is a
//! struct (possibly empty), so every operation has the same shape. Fields
//! marked `default` may be left out in JSON.

use crate::byte_buf::ByteBuf;
use crate::pane::{PaneId, Size};
use serde::{Deserialize, Serialize};

/// A request and the id the client chose for it. The host echoes the id in
/// the response or error that answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestFrame {
    /// Chosen by the client; unique among its requests in flight.
    pub id: u64,
    /// What is asked.
    pub request: Request,
}

/// Every operation a client can ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Start a new pane running a runtime. Answered by `started`.
    Start(StartParams),
    /// Write input to a pane. Answered by `sent`.
    Send(SendParams),
    /// Interrupt what the pane's process is doing. Answered by `interrupted`.
    Interrupt {
        /// The pane.
        pane: PaneId,
    },
    /// Describe a pane with its current screen. Answered by `inspected`.
    Inspect {
        /// The pane.
        pane: PaneId,
    },
    /// Subscribe to a pane's output and lifecycle events. Answered by
    /// `subscribed`; events follow, tagged with the subscription id.
    Events {
        /// The pane.
        pane: PaneId,
        /// Resume after this many bytes of output (an absolute offset).
        /// When absent, the stream starts at the current screen.
        #[serde(default)]
        from: Option<u64>,
    },
    /// Resume a subscription after a lost connection: the client names the
    /// generation it saw and the offset up to which it processed output.
    /// Answered by `subscribed`, whose `start` says how the gap was handled.
    Reconnect {
        /// The pane.
        pane: PaneId,
        /// The generation the client last saw.
        generation: u64,
        /// The offset up to which the client processed output.
        offset: u64,
    },
    /// End a subscription on this connection. Answered by `unsubscribed`.
    Unsubscribe {
        /// The subscription id from `subscribed`.
        subscription: u64,
    },
    /// Change a pane's terminal size. Answered by `resized`.
    Resize {
        /// The pane.
        pane: PaneId,
        /// The new size; both dimensions at least 1.
        size: Size,
    },
    /// List every pane. Answered by `panes`.
    List {},
    /// End a pane's process group, reap it and forget the pane. Answered by
    /// `closed`.
    Close {
        /// The pane.
        pane: PaneId,
    },
    /// Describe the runtimes this host can start. Answered by `runtimes`.
    Runtimes {},
    /// Open a pane running the runtime's own interactive sign-in. Answered
    /// by `started`; a runtime that signs in elsewhere answers
    /// `OPERATION_UNSUPPORTED` with `LOGIN_NOT_IN_TERMINAL`, one that needs
    /// no sign-in `LOGIN_NOT_REQUIRED`.
    Login {
        /// The runtime id.
        runtime: String,
        /// The working directory; the host's home directory when absent.
        #[serde(default)]
        cwd: Option<String>,
        /// The terminal size; 80x24 when absent.
        #[serde(default)]
        size: Option<Size>,
    },
}

/// Parameters of `start`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StartParams {
    /// The runtime id, such as `shell`.
    pub runtime: String,
    /// The working directory; the host's home directory when absent.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The terminal size; 80x24 when absent.
    #[serde(default)]
    pub size: Option<Size>,
    /// For `shell` only: a command (program and arguments) to run instead
    /// of the interactive shell. Other runtimes refuse it: the host builds
    /// their argv itself.
    #[serde(default)]
    pub command: Vec<String>,
    /// The model, for runtimes that take one.
    #[serde(default)]
    pub model: Option<String>,
    /// Resume an earlier session of the runtime instead of starting fresh.
    #[serde(default)]
    pub resume: Option<ResumeRequest>,
}

/// Which earlier session a start should resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeRequest {
    /// Exactly this session reference, as the runtime recorded it.
    Reference(String),
    /// Whatever the runtime considers its latest session.
    Latest,
}

/// Parameters of `send`. The bytes written are `text`, then `bytes`, then
/// a carriage return if `enter` is set.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SendParams {
    /// The pane.
    pub pane: PaneId,
    /// UTF-8 text to type.
    #[serde(default)]
    pub text: String,
    /// Raw bytes to write (base64 in JSON), for keys and control sequences.
    #[serde(default)]
    pub bytes: ByteBuf,
    /// Press Enter (a carriage return) after the input.
    #[serde(default)]
    pub enter: bool,
}

impl SendParams {
    /// The exact bytes this request writes to the pane.
    pub fn input_bytes(&self) -> Vec<u8> {
        let mut input = Vec::with_capacity(self.text.len() + self.bytes.len() + 1);
        input.extend_from_slice(self.text.as_bytes());
        input.extend_from_slice(self.bytes.as_slice());
        if self.enter {
            input.push(b'\r');
        }
        input
    }
}
