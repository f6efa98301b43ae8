//! `airlock-scripted-model`: the scripted OpenAI-compatible model as a standalone server.
//!
//! Prints the base URL (`http://127.0.0.1:PORT/v1`) on the first stdout line, then serves until
//! killed. Scripted replies (`--script FILE`, a JSON array, see `airlock_testkit::ScriptEntry`)
//! are answered first; after that every request gets the round-trip fallback: a call to `--tool`
//! with `--args` when the last message is the user's, otherwise the text "done".

use airlock_testkit::{Fallback, ScriptedModel, parse_script};
use serde_json::{Value, json};
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

const USAGE: &str = "usage: airlock-scripted-model [--tool NAME] [--args JSON] [--script FILE] [--port PORT]

  --tool NAME     tool the fallback calls (default builtin__write_file)
  --args JSON     arguments of that call (default {\"path\":\"bench.txt\",\"content\":\"hello\"})
  --script FILE   JSON array of replies answered first:
                  {\"text\": \"...\"} | {\"tool_calls\": [{\"id\": \"c1\", \"name\": \"t\", \"arguments\": {...} or \"raw\"}]}
                  | {\"error\": {\"status\": 429, \"retry_after\": 1}} | {\"cut_stream\": {\"name\": \"t\", \"arguments\": ...}}
  --port PORT     port on 127.0.0.1 (default: any free port)";

struct Options {
    tool: String,
    args: Value,
    script: Option<String>,
    port: u16,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Option<Options>, String> {
    let mut options = Options {
        tool: "builtin__write_file".to_string(),
        args: json!({"path": "bench.txt", "content": "hello"}),
        script: None,
        port: 0,
    };
    while let Some(flag) = argv.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) if name.starts_with("--") => {
                (name.to_string(), Some(value.to_string()))
            }
            _ => (flag.clone(), None),
        };
        if name == "-h" || name == "--help" {
            return Ok(None);
        }
        if !["--tool", "--args", "--script", "--port"].contains(&name.as_str()) {
            return Err(format!("unknown option {name}"));
        }
        let value = match inline {
            Some(value) => value,
            None => argv.next().ok_or_else(|| format!("{name} needs a value"))?,
        };
        match name.as_str() {
            "--tool" => options.tool = value,
            "--args" => {
                options.args =
                    serde_json::from_str(&value).map_err(|e| format!("--args is not JSON: {e}"))?
            }
            "--script" => options.script = Some(value),
            "--port" => options.port = value.parse().map_err(|e| format!("--port: {e}"))?,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(Some(options))
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("airlock-scripted-model: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let replies = match &options.script {
        None => Vec::new(),
        Some(path) => {
            let parsed = std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|text| parse_script(&text).map_err(|e| e.to_string()));
            match parsed {
                Ok(replies) => replies,
                Err(message) => {
                    eprintln!("airlock-scripted-model: cannot use script {path}: {message}");
                    return ExitCode::from(2);
                }
            }
        }
    };
    let fallback = Fallback::RoundTrip {
        tool_name: options.tool,
        args: options.args,
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], options.port));
    let model = match ScriptedModel::start_on(addr, replies, fallback).await {
        Ok(model) => model,
        Err(e) => {
            eprintln!("airlock-scripted-model: cannot listen on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{}", model.base_url())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(stdout);
    let _ = tokio::signal::ctrl_c().await;
    drop(model);
    ExitCode::SUCCESS
}
