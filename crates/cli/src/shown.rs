//! How the CLI shows what the engine sends: every command that prints the engine's text uses
//! this (a module of its own, so the commands that print do not reach into each other).

use serde_json::Value;

/// A value from the engine as text for the terminal, hidden characters (bidi overrides,
/// control characters, terminal escapes) shown as visible escapes: names, reasons and
/// descriptions may come from an MCP server or a model.
pub fn text(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    airlock_core::display::visible(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_from_the_engine_shows_hidden_characters_escaped() {
        let shown = text(&json!("ls \u{202e}gpj.exe\u{1b}[2J"));
        assert_eq!(shown, "ls \\u{202E}gpj.exe\\u{001B}[2J");
        assert_eq!(text(&json!("two\nlines")), "two\nlines");
        assert_eq!(text(&Value::Null), "");
    }
}
