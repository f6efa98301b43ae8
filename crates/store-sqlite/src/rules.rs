//! Argument rules.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, StoreError, now};
use airlock_core::{ArgRule, RuleEffect, RulePattern, ids};
use airlock_protocol::{AddedRule, RuleRow};
use rusqlite::{OptionalExtension, params};

impl Store {
    /// Adds an argument rule; the caller has compiled it once to check the pattern. A rule
    /// identical to one already there (same tool, pointer, pattern and effect) adds nothing and
    /// is not audited: the answer is that rule, `already_existed`.
    pub fn add_rule(&self, rule: &ArgRule) -> Result<AddedRule> {
        let (kind, pattern) = match &rule.pattern {
            RulePattern::Glob(p) => ("glob", p),
            RulePattern::Regex(p) => ("regex", p),
        };
        self.write(|tx| {
            let existing: Option<String> = tx
                .row(
                    "SELECT id FROM rules WHERE server = ?1 AND tool = ?2 AND pointer = ?3
                     AND kind = ?4 AND pattern = ?5 AND effect = ?6 ORDER BY created_at, id LIMIT 1",
                    params![rule.server, rule.tool, rule.pointer, kind, pattern, rule.effect.as_str()],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(id) = existing {
                return Ok(AddedRule { rule: ArgRule { id, ..rule.clone() }, already_existed: true, covers_waiting: Vec::new() });
            }
            tx.run(
                "INSERT INTO rules (id, server, tool, pointer, kind, pattern, effect, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    rule.id,
                    rule.server,
                    rule.tool,
                    rule.pointer,
                    kind,
                    pattern,
                    rule.effect.as_str(),
                    now()
                ],
            )?;
            insert_audit(
                tx,
                "user",
                "rule_added",
                None,
                None,
                None,
                &serde_json::to_value(rule).unwrap_or_default(),
            )?;
            Ok(AddedRule { rule: rule.clone(), already_existed: false, covers_waiting: Vec::new() })
        })
    }

    /// Removes the rule `id`, audited as `rule_removed`; false when there was none.
    pub fn remove_rule(&self, id: &str) -> Result<bool> {
        self.delete_audited("rules", id, "rule_removed")
    }

    pub fn rules(&self) -> Result<Vec<RuleRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT id, server, tool, pointer, kind, pattern, effect, created_at FROM rules ORDER BY created_at, id",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })?;
            rows.map(|row| {
                let (id, server, tool, pointer, kind, pattern, effect, created_at) = row?;
                let pattern = if kind == "regex" { RulePattern::Regex(pattern) } else { RulePattern::Glob(pattern) };
                let effect: RuleEffect = effect
                    .parse()
                    .map_err(|message| StoreError::CorruptJson { what: "rule effect", message })?;
                Ok(RuleRow { rule: ArgRule { id, server, tool, pointer, pattern, effect }, created_at })
            })
            .collect()
        })
    }

    /// A new rule id.
    pub fn new_rule_id() -> String {
        ids::new_id("rule")
    }
}
