//! Revisions of the protocol: JSON clients of any revision are served;
//! bincode clients must speak the host's revision exactly.

mod support;

use panehost_ipc::{Encoding, HandshakeReply, PROTOCOL_REVISION, PROTOCOL_VERSION};
use std::os::unix::net::UnixStream;
use support::*;

fn handshake(host: &TestHost, hello: &str) -> (UnixStream, HandshakeReply) {
    let mut stream = UnixStream::connect(&host.socket).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    write_frame(&mut stream, hello.as_bytes());
    let reply = serde_json::from_slice(&read_frame(&mut stream).expect("a handshake reply")).unwrap();
    (stream, reply)
}

#[test]
fn json_clients_of_any_revision_are_served_and_see_the_hosts() {
    let host = TestHost::start();
    for hello in [
        r#"{"protocol":1,"encoding":"json"}"#.to_owned(),
        r#"{"protocol":1,"revision":1,"encoding":"json"}"#.to_owned(),
        format!(r#"{{"protocol":1,"revision":{},"encoding":"json"}}"#, PROTOCOL_REVISION + 5),
    ] {
        let (mut stream, reply) = handshake(&host, &hello);
        let HandshakeReply::Welcome(welcome) = reply else { panic!("{hello}: {reply:?}") };
        assert_eq!((welcome.protocol, welcome.revision), (PROTOCOL_VERSION, PROTOCOL_REVISION));
        // An older client leaves out the fields it does not know; a newer
        // one may send fields this host does not know: both are served.
        write_frame(&mut stream, br#"{"id":1,"request":{"start":{"runtime":"shell","a_later_option":true}}}"#);
        let answer: serde_json::Value = serde_json::from_slice(&read_frame(&mut stream).unwrap()).unwrap();
        let pane = answer["response"]["body"]["started"]["id"].as_str().unwrap_or_else(|| panic!("{answer}"));
        write_frame(&mut stream, format!(r#"{{"id":2,"request":{{"close":{{"pane":"{pane}"}}}}}}"#).as_bytes());
        let closed: serde_json::Value = serde_json::from_slice(&read_frame(&mut stream).unwrap()).unwrap();
        assert!(closed["response"]["body"]["closed"].is_object(), "{closed}");
        // A request this revision does not have is malformed, with its id.
        write_frame(&mut stream, br#"{"id":3,"request":{"a_later_request":{}}}"#);
        let refused: serde_json::Value = serde_json::from_slice(&read_frame(&mut stream).unwrap()).unwrap();
        assert_eq!(refused["error"]["id"], 3);
        assert_eq!(refused["error"]["error"]["code"], "MALFORMED_REQUEST");
    }
    host.stop();
}

#[test]
fn a_bincode_client_of_another_revision_is_refused_by_name() {
    let host = TestHost::start();
    for (hello, theirs) in [
        (r#"{"protocol":1,"encoding":"bincode"}"#.to_owned(), 1),
        (
            format!(r#"{{"protocol":1,"revision":{},"encoding":"bincode"}}"#, PROTOCOL_REVISION + 1),
            PROTOCOL_REVISION + 1,
        ),
    ] {
        let (_, reply) = handshake(&host, &hello);
        let HandshakeReply::Refused { code, message, protocol } = reply else { panic!("{hello}: {reply:?}") };
        assert_eq!((code.as_str(), protocol), ("PROTOCOL_MISMATCH", PROTOCOL_VERSION));
        assert!(message.contains(&format!("revision {theirs}, this host revision {PROTOCOL_REVISION}")), "{message}");
    }
    // The same revision is served.
    host.connect(Encoding::Bincode).ok(panehost_ipc::Request::List { labels: Default::default() });
    host.stop();
}
