//! A tiny stdio MCP server used by the end-to-end tests (see `airlock_testkit::mcp_server`).

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::process::ExitCode {
    match airlock_testkit::mcp_server::run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("airlock-test-mcp-server: {error}");
            std::process::ExitCode::from(1)
        }
    }
}
