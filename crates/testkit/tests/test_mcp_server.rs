//! The test MCP server binary lives here, not in a shipped crate: it is built with this crate,
//! answers MCP's `initialize` as itself, and `mcp_server::binary()` (how other crates' tests
//! find it) names it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const BINARY: &str = env!("CARGO_BIN_EXE_airlock-test-mcp-server");

#[test]
fn the_test_mcp_server_is_built_here_and_answers_initialize() {
    assert_eq!(
        std::fs::canonicalize(airlock_testkit::mcp_server::binary()).unwrap(),
        std::fs::canonicalize(BINARY).unwrap()
    );
    let mut server = Command::new(BINARY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    });
    let mut stdin = server.stdin.take().unwrap();
    writeln!(stdin, "{initialize}").unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // Closing stdin is the client going away: the server ends.
    drop(stdin);
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "airlock-test-mcp-server",
        "{answer}"
    );
    assert!(server.wait().unwrap().success());
}
