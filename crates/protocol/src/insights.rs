//! What Airlock learns from History: rules proposed from an approval with their preview, and
//! per-tool approval insights with one-click suggestions.

use airlock_core::ToolSetting;
use airlock_core::policy::RuleEffect;
use serde::{Deserialize, Serialize};

/// A rule proposed from an inbox item (or typed by hand, for `rules add --dry-run`), with what
/// it would have done to the calls in History.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RuleSuggestion {
    pub server: String,
    pub tool: String,
    pub pointer: String,
    pub pattern: String,
    /// The pattern is a regular expression (else a glob).
    pub regex: bool,
    pub action: RuleEffect,
    /// What it covers, in words ("anything under src/").
    pub label: String,
    /// Past calls of the tool in History it matches.
    pub matches: u32,
    /// Of those, the ones a person denied when asked: the rule would have let them through.
    pub denied_matches: u32,
    /// Past calls of the tool in History.
    pub history: u32,
}

/// A one-click action an insight suggests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum SuggestedAction {
    /// Add this rule (previewed: every past call it matches was approved).
    AddRule { rule: RuleSuggestion },
    /// Change the tool's setting.
    SetTool { setting: ToolSetting },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InsightSuggestion {
    pub text: String,
    pub action: SuggestedAction,
}

/// How one tool's requests to a person went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolInsight {
    pub server: String,
    pub tool: String,
    /// Requests put to a person (tool calls, not forms).
    pub requests: u32,
    pub approved: u32,
    pub denied: u32,
    /// Median time from asking to a person's decision; `None` before any was decided.
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub median_decide_ms: Option<u64>,
    /// Decisions made within a second of asking: likely rubber-stamped.
    pub fast_decisions: u32,
    pub suggestions: Vec<InsightSuggestion>,
}

/// One day's requests and how they were decided (UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DayCount {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub requests: u32,
    pub approved: u32,
    pub denied: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Insights {
    /// Most requested first.
    pub tools: Vec<ToolInsight>,
    /// Oldest first, every day from the first request to today.
    pub days: Vec<DayCount>,
}
