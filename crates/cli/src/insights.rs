//! `airlock insights` and the rule previews of `rules suggest` / `rules add --dry-run`.

use crate::shown::text;
use airlock_agents::connect::shell_word as shell_quote;
use airlock_api::ApiClient;
use serde_json::Value;
use std::process::ExitCode;

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// One rule with its preview, and the command that adds it.
pub fn print_rule_preview(rule: &Value) {
    let regex = rule["regex"] == Value::Bool(true);
    let denied = count(&rule["denied_matches"]);
    println!(
        "{}/{} {} {} {}  — {}",
        text(&rule["server"]),
        text(&rule["tool"]),
        text(&rule["pointer"]),
        if regex { "regex" } else { "glob" },
        text(&rule["pattern"]),
        text(&rule["label"]),
    );
    println!(
        "    matches {} of {} past calls in History{}",
        count(&rule["matches"]),
        count(&rule["history"]),
        if denied > 0 {
            format!(
                "; WARNING: {denied} of them a person denied — this rule would have allowed them"
            )
        } else {
            String::new()
        }
    );
    println!(
        "    airlock rules add {}/{} {} {} {}{}",
        shell_quote(&text(&rule["server"])),
        shell_quote(&text(&rule["tool"])),
        shell_quote(&text(&rule["pointer"])),
        shell_quote(&text(&rule["pattern"])),
        text(&rule["action"]),
        if regex { " --regex" } else { "" }
    );
}

pub async fn insights(client: &ApiClient, json: bool) -> anyhow::Result<ExitCode> {
    let found = client
        .call_json(&airlock_protocol::commands::InsightsCommand {})
        .await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&found["tools"])?);
        return Ok(ExitCode::SUCCESS);
    }
    let tools = found["tools"].as_array().cloned().unwrap_or_default();
    if tools.is_empty() {
        println!("Nothing has been asked yet.");
        return Ok(ExitCode::SUCCESS);
    }
    println!("tool\trequests\tapproved\tdenied\tmedian to decide\twithin 1 s");
    for tool in &tools {
        let median = tool["median_decide_ms"]
            .as_u64()
            .map(|ms| format!("{:.1} s", ms as f64 / 1000.0))
            .unwrap_or_else(|| "-".into());
        println!(
            "{}/{}\t{}\t{}\t{}\t{median}\t{}",
            text(&tool["server"]),
            text(&tool["tool"]),
            count(&tool["requests"]),
            count(&tool["approved"]),
            count(&tool["denied"]),
            count(&tool["fast_decisions"]),
        );
        for suggestion in tool["suggestions"].as_array().into_iter().flatten() {
            println!("    suggestion: {}", text(&suggestion["text"]));
        }
    }
    Ok(ExitCode::SUCCESS)
}
