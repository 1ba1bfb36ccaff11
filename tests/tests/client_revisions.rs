//! The clients of other languages speak the host's protocol version and
//! revision, and docs/PROTOCOL-CHANGELOG.md has an entry for every
//! revision: read from their sources, since a client of a stale revision
//! still works (JSON is served at any revision) and only drifts.

use panehost_ipc::{PROTOCOL_REVISION, PROTOCOL_VERSION};
use std::path::PathBuf;

fn repository_file(path: &str) -> String {
    let full = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|err| panic!("cannot read {}: {err}", full.display()))
}

/// The number in the line `<prefix>N;` of `text`, which must be there once.
fn constant(text: &str, prefix: &str) -> u32 {
    let values: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix(prefix))
        .map(|rest| rest.trim_end_matches(';'))
        .collect();
    assert_eq!(values.len(), 1, "`{prefix}` appears {} times", values.len());
    values[0].parse().unwrap_or_else(|_| panic!("`{prefix}{}` is not a number", values[0]))
}

#[test]
fn the_typescript_client_speaks_the_hosts_revision() {
    let connection = repository_file("client/typescript/src/connection.ts");
    assert_eq!(constant(&connection, "export const PROTOCOL_VERSION = "), PROTOCOL_VERSION);
    assert_eq!(
        constant(&connection, "export const PROTOCOL_REVISION = "),
        PROTOCOL_REVISION,
        "client/typescript/src/connection.ts speaks another revision than the host"
    );
}

#[test]
fn the_python_client_speaks_the_hosts_revision() {
    let protocol = repository_file("client/python/panehost/protocol.py");
    assert_eq!(constant(&protocol, "PROTOCOL_VERSION = "), PROTOCOL_VERSION);
    assert_eq!(
        constant(&protocol, "PROTOCOL_REVISION = "),
        PROTOCOL_REVISION,
        "client/python/panehost/protocol.py speaks another revision than the host"
    );
}

#[test]
fn the_changelog_has_an_entry_per_revision() {
    let changelog = repository_file("docs/PROTOCOL-CHANGELOG.md");
    let entries: Vec<u32> = changelog
        .lines()
        .filter_map(|line| line.strip_prefix("## Revision "))
        .map(|number| number.trim().parse().expect("a revision number"))
        .collect();
    let expected: Vec<u32> = (1..=PROTOCOL_REVISION).rev().collect();
    assert_eq!(entries, expected, "docs/PROTOCOL-CHANGELOG.md: one entry per revision, newest first");
}
