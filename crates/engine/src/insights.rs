//! Fewer, better prompts from History: rules proposed from an approval (each previewed against
//! the tool's past calls with the policy's own matching), a hand-typed rule's preview, and the
//! per-tool approval insights with their one-click suggestions.

use crate::clock::parse_time;
use crate::*;
use airlock_core::policy::{ArgRule, RuleEffect, RulePattern, RuleProbe};
use airlock_core::suggest::{Candidate, candidates, grant_pattern, runs_commands};
use airlock_core::{ItemKind, ToolSetting};
use airlock_protocol::{
    DayCount, GrantOffer, InsightSuggestion, Insights, RuleSuggestion, SuggestedAction, ToolInsight,
};
use airlock_store::{AskedRow, PastCall};
use std::collections::{BTreeMap, HashSet};

/// A decision within this long of the request is counted as likely rubber-stamped.
const FAST_DECISION_MS: i64 = 1000;
/// Fewer requests than this are too few to suggest anything from.
const MIN_REQUESTS_TO_SUGGEST: u32 = 5;
/// "Never denied in N calls — not required?" needs at least this many.
const MIN_REQUESTS_NOT_REQUIRED: u32 = 20;
/// Rule candidates for insights come from this many of a tool's latest approved calls.
const LATEST_APPROVED_SAMPLED: usize = 5;

/// A rule's preview against a tool's past calls.
fn preview(rule: &ArgRule, label: String, past: &[PastCall]) -> Result<RuleSuggestion> {
    let probe = RuleProbe::new(rule)?;
    let (mut matches, mut denied_matches) = (0, 0);
    for call in past {
        if probe.matches(&call.args) {
            matches += 1;
            denied_matches += u32::from(call.denied_by_person);
        }
    }
    let (pattern, regex) = match &rule.pattern {
        RulePattern::Glob(p) => (p.clone(), false),
        RulePattern::Regex(p) => (p.clone(), true),
    };
    Ok(RuleSuggestion {
        server: rule.server.clone(),
        tool: rule.tool.clone(),
        pointer: rule.pointer.clone(),
        pattern,
        regex,
        action: rule.effect,
        label,
        matches,
        denied_matches,
        history: past.len() as u32,
    })
}

fn millis_between(from: &str, to: &str) -> Option<i64> {
    Some((parse_time(to)? - parse_time(from)?).whole_milliseconds() as i64)
}

impl Engine {
    /// Rules that would let calls like this inbox item's run without asking, each with how many
    /// past calls of the tool it matches and how many of those a person denied.
    pub fn suggest_rules(&self, approval_id: &str) -> Result<Vec<RuleSuggestion>> {
        let row = self.inner.store.approval(approval_id)?.ok_or_else(|| {
            EngineError::Store(airlock_store::StoreError::UnknownApproval(
                approval_id.to_string(),
            ))
        })?;
        if !matches!(row.kind, ItemKind::ToolCall | ItemKind::AgentToolCall) {
            return Err(EngineError::Invalid(format!(
                "{approval_id} is not a tool call Airlock decides; no rule applies to it"
            )));
        }
        let past = self.inner.store.past_calls(&row.server, &row.tool)?;
        candidates(&row.tool, &row.args)
            .iter()
            .map(|candidate| {
                preview(
                    &candidate.rule(&row.server, &row.tool),
                    candidate.label.clone(),
                    &past,
                )
            })
            .collect()
    }

    /// What a grant made from this inbox item covers by default (its chat, the suggested
    /// pattern), and whether "any arguments" would be any command.
    pub fn grant_offer(&self, approval_id: &str) -> Result<GrantOffer> {
        let row = self.inner.store.approval(approval_id)?.ok_or_else(|| {
            EngineError::Store(airlock_store::StoreError::UnknownApproval(
                approval_id.to_string(),
            ))
        })?;
        Ok(GrantOffer {
            label: grant_pattern(&row.tool, &row.args)
                .map_or_else(|| "these exact arguments".to_string(), |p| p.label),
            runs_commands: runs_commands(&row.tool, &row.args),
            session: row.session,
        })
    }

    /// What a rule typed by hand would have matched in History (`rules add --dry-run`).
    pub fn preview_rule(&self, rule: &ArgRule) -> Result<RuleSuggestion> {
        let past = self.inner.store.past_calls(&rule.server, &rule.tool)?;
        preview(rule, "as typed".into(), &past)
    }

    /// Per tool: requests put to a person, approved and denied, the median time to decide,
    /// decisions within a second; suggestions; and requests per day.
    pub fn insights(&self) -> Result<Insights> {
        let asked = self.inner.store.asked_rows()?;
        let mut by_tool: BTreeMap<(String, String), Vec<&AskedRow>> = BTreeMap::new();
        let mut days: BTreeMap<String, DayCount> = BTreeMap::new();
        for row in &asked {
            by_tool
                .entry((row.server.clone(), row.tool.clone()))
                .or_default()
                .push(row);
            let day = row.created_at.get(..10).unwrap_or_default().to_string();
            let count = days.entry(day.clone()).or_insert_with(|| DayCount {
                day,
                requests: 0,
                approved: 0,
                denied: 0,
            });
            count.requests += 1;
            count.approved += u32::from(row.status == "approved");
            count.denied += u32::from(row.status == "denied");
        }
        let policy = self.inner.policy()?;
        let mut tools: Vec<ToolInsight> = by_tool
            .into_iter()
            .map(|((server, tool), rows)| {
                let mut insight = tool_insight(server, tool, &rows);
                insight.suggestions = suggestions(&insight, &rows, &policy);
                insight
            })
            .collect();
        tools.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| (&a.server, &a.tool).cmp(&(&b.server, &b.tool)))
        });
        Ok(Insights {
            tools,
            days: fill_days(days),
        })
    }
}

fn tool_insight(server: String, tool: String, rows: &[&AskedRow]) -> ToolInsight {
    let mut decide_ms: Vec<i64> = rows
        .iter()
        .filter(|row| row.status == "approved" || row.status == "denied")
        .filter_map(|row| millis_between(&row.created_at, row.decided_at.as_deref()?))
        .collect();
    decide_ms.sort_unstable();
    ToolInsight {
        server,
        tool,
        requests: rows.len() as u32,
        approved: rows.iter().filter(|r| r.status == "approved").count() as u32,
        denied: rows.iter().filter(|r| r.status == "denied").count() as u32,
        median_decide_ms: decide_ms
            .get(decide_ms.len() / 2)
            .map(|ms| (*ms).max(0) as u64),
        fast_decisions: decide_ms
            .iter()
            .filter(|ms| **ms < FAST_DECISION_MS)
            .count() as u32,
        suggestions: Vec::new(),
    }
}

/// One-click suggestions for a tool that is asked about often and (nearly) always approved: a
/// rule that would have matched only approved calls, or not asking for it at all.
fn suggestions(
    insight: &ToolInsight,
    rows: &[&AskedRow],
    policy: &airlock_core::PolicyConfig,
) -> Vec<InsightSuggestion> {
    let mut out = Vec::new();
    if insight.requests < MIN_REQUESTS_TO_SUGGEST || insight.approved == 0 {
        return out;
    }
    let name = format!("{}/{}", insight.server, insight.tool);
    // The generalising candidates (prefixes, folders) of the latest approved calls, each
    // counted over every asked call of the tool; the best one that never matched a denial.
    let past: Vec<PastCall> = rows
        .iter()
        .map(|row| PastCall {
            args: row.args.clone(),
            denied_by_person: row.status == "denied",
        })
        .collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut best: Option<(RuleSuggestion, Outcomes)> = None;
    for row in rows
        .iter()
        .rev()
        .filter(|row| row.status == "approved")
        .take(LATEST_APPROVED_SAMPLED)
    {
        for candidate in candidates(&insight.tool, &row.args)
            .into_iter()
            .filter(generalises)
        {
            let key = format!("{}\u{1f}{:?}", candidate.pointer, candidate.pattern);
            if !seen.insert(key) {
                continue;
            }
            let rule = candidate.rule(&insight.server, &insight.tool);
            let (Ok(previewed), Ok(outcomes)) = (
                preview(&rule, candidate.label.clone(), &past),
                Outcomes::of(&rule, rows),
            ) else {
                continue;
            };
            // Only decided calls count for the rule: a call still waiting was approved by nobody.
            if outcomes.denied == 0
                && outcomes.approved >= MIN_REQUESTS_TO_SUGGEST
                && best
                    .as_ref()
                    .is_none_or(|(_, b)| outcomes.approved > b.approved)
            {
                best = Some((previewed, outcomes));
            }
        }
    }
    if let Some((rule, outcomes)) = best {
        out.push(InsightSuggestion {
            text: format!("{name} {}: {} — make a rule?", rule.label, outcomes.text()),
            action: SuggestedAction::AddRule { rule },
        });
    }
    let asks =
        policy.effective_setting(&insight.server, &insight.tool, false) != ToolSetting::NotRequired;
    if insight.denied == 0
        && insight.requests >= MIN_REQUESTS_NOT_REQUIRED
        && asks
        && !airlock_core::never_from_notification(&insight.server, &insight.tool)
    {
        out.push(InsightSuggestion {
            text: format!(
                "{name}: never denied in {} calls — not required?",
                insight.requests
            ),
            action: SuggestedAction::SetTool {
                setting: ToolSetting::NotRequired,
            },
        });
    }
    out
}

/// How the asked calls a rule matches ended: only approvals and denials are decisions; the
/// calls still waiting are named apart, never counted as approved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Outcomes {
    approved: u32,
    denied: u32,
    waiting: u32,
}

impl Outcomes {
    fn of(rule: &ArgRule, rows: &[&AskedRow]) -> Result<Self> {
        let probe = RuleProbe::new(rule)?;
        let mut outcomes = Self::default();
        for row in rows.iter().filter(|row| probe.matches(&row.args)) {
            match row.status.as_str() {
                "approved" => outcomes.approved += 1,
                "denied" => outcomes.denied += 1,
                "pending" => outcomes.waiting += 1,
                _ => {}
            }
        }
        Ok(outcomes)
    }

    /// "4 of 5 decided calls approved, 1 denied; 6 waiting not counted".
    fn text(self) -> String {
        let decided = self.approved + self.denied;
        let mut text = format!(
            "{} of {decided} decided calls approved, {} denied",
            self.approved, self.denied
        );
        if self.waiting > 0 {
            text.push_str(&format!("; {} waiting not counted", self.waiting));
        }
        text
    }
}

/// A candidate that covers more than the one value it came from.
fn generalises(candidate: &Candidate) -> bool {
    candidate.effect == RuleEffect::Allow
        && match &candidate.pattern {
            RulePattern::Regex(_) => true,
            RulePattern::Glob(pattern) => pattern.ends_with("/**"),
        }
}

/// Every day from the first to the last with requests, the quiet ones as zeros.
fn fill_days(days: BTreeMap<String, DayCount>) -> Vec<DayCount> {
    let parse = |day: &str| {
        time::Date::parse(
            day,
            time::macros::format_description!("[year]-[month]-[day]"),
        )
        .ok()
    };
    let (Some(first), Some(last)) = (
        days.keys().next().and_then(|d| parse(d)),
        days.keys().last().and_then(|d| parse(d)),
    ) else {
        return days.into_values().collect();
    };
    let mut out = Vec::new();
    let mut day = first;
    while day <= last && out.len() <= 3660 {
        let key = day.to_string();
        out.push(days.get(&key).cloned().unwrap_or(DayCount {
            day: key,
            requests: 0,
            approved: 0,
            denied: 0,
        }));
        match day.next_day() {
            Some(next) => day = next,
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn asked(command: &str, status: &str) -> AskedRow {
        AskedRow {
            server: "builtin".into(),
            tool: "run_command".into(),
            created_at: "2026-11-24T10:00:00Z".into(),
            decided_at: (status != "pending").then(|| "2026-11-24T10:00:05Z".into()),
            status: status.into(),
            args: json!({ "command": command }),
        }
    }

    /// Issue 27: a suggestion counted calls still waiting as approved ("11 of 11 approved");
    /// only decided calls count, and the waiting ones are named apart.
    #[test]
    fn a_suggestion_counts_decided_calls_only_and_names_the_waiting_ones() {
        let mut rows: Vec<AskedRow> = (0..5)
            .map(|i| asked(&format!("git status -s{i}"), "approved"))
            .collect();
        rows.extend((0..6).map(|i| asked(&format!("git status -w{i}"), "pending")));
        let rows: Vec<&AskedRow> = rows.iter().collect();
        let insight = tool_insight("builtin".into(), "run_command".into(), &rows);
        let policy = airlock_core::PolicyConfig::compile(Default::default()).unwrap();
        let found = suggestions(&insight, &rows, &policy);
        let texts: Vec<&str> = found.iter().map(|s| s.text.as_str()).collect();
        assert!(
            texts
                .iter()
                .any(|t| t
                    .contains("5 of 5 decided calls approved, 0 denied; 6 waiting not counted")),
            "{texts:?}"
        );

        // Four approved are too few to suggest a rule, however many wait.
        let mut rows: Vec<AskedRow> = (0..4)
            .map(|i| asked(&format!("git status -s{i}"), "approved"))
            .collect();
        rows.extend((0..6).map(|i| asked(&format!("git status -w{i}"), "pending")));
        let rows: Vec<&AskedRow> = rows.iter().collect();
        let insight = tool_insight("builtin".into(), "run_command".into(), &rows);
        let found = suggestions(&insight, &rows, &policy);
        assert!(
            found
                .iter()
                .all(|s| !matches!(s.action, SuggestedAction::AddRule { .. })),
            "{found:?}"
        );
    }

    #[test]
    fn outcomes_read_as_decided_calls() {
        let outcomes = Outcomes {
            approved: 4,
            denied: 1,
            waiting: 6,
        };
        assert_eq!(
            outcomes.text(),
            "4 of 5 decided calls approved, 1 denied; 6 waiting not counted"
        );
    }
}
