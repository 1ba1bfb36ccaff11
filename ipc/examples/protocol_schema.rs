//! Writes docs/protocol.schema.json, the JSON Schema of the JSON encoding:
//!
//! ```text
//! cargo run -p panehost-ipc --example protocol_schema
//! ```

use panehost_ipc::schema::{protocol_schema_text, SCHEMA_PATH};
use std::path::Path;

fn main() -> std::io::Result<()> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(SCHEMA_PATH);
    std::fs::write(&path, protocol_schema_text())?;
    println!("wrote {SCHEMA_PATH}");
    Ok(())
}
