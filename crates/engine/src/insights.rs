//! Fewer, better prompts from History: rules proposed from an approval (each previewed against
//! the tool's past calls with the policy's own matching), a hand-typed rule's preview, and the
//! per-tool approval insights with their one-click suggestions.

use crate::clock::parse_time;
use crate::*;
use airlock_core::policy::{ArgRule, RuleEffect, RulePattern, RuleProbe};
use airlock_core::suggest::{Candidate, candidates};
use airlock_core::{ItemKind, ToolSetting};
use airlock_protocol::{
    DayCount, InsightSuggestion, Insights, RuleSuggestion, SuggestedAction, ToolInsight,
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
    let mut best: Option<RuleSuggestion> = None;
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
            let Ok(previewed) = preview(&rule, candidate.label.clone(), &past) else {
                continue;
            };
            if previewed.denied_matches == 0
                && previewed.matches >= MIN_REQUESTS_TO_SUGGEST
                && best.as_ref().is_none_or(|b| previewed.matches > b.matches)
            {
                best = Some(previewed);
            }
        }
    }
    if let Some(rule) = best {
        out.push(InsightSuggestion {
            text: format!(
                "{name} {}: {} of {} approved — make a rule?",
                rule.label, rule.matches, rule.matches
            ),
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
