//! Argument rules.

use crate::PostgresStore;
use crate::audit::{Deletable, insert_audit};
use crate::error::Error;
use airlock_core::{ArgRule, RuleEffect, RulePattern};
use airlock_protocol::AddedRule;
use airlock_store_port::{self as port, RuleRow, StoreError, now};

impl port::Rules for PostgresStore {
    fn add_rule(&self, rule: &ArgRule) -> port::Result<AddedRule> {
        let (kind, pattern) = match &rule.pattern {
            RulePattern::Glob(p) => ("glob", p),
            RulePattern::Regex(p) => ("regex", p),
        };
        self.transaction(async |tx| {
            let existing = tx
                .query_opt(
                    "SELECT id FROM rules WHERE server = $1 AND tool = $2 AND pointer = $3
                     AND kind = $4 AND pattern = $5 AND effect = $6 ORDER BY created_at, id LIMIT 1",
                    &[&rule.server, &rule.tool, &rule.pointer, &kind, pattern, &rule.effect.as_str()],
                )
                .await?;
            if let Some(existing) = existing {
                return Ok(AddedRule {
                    rule: ArgRule {
                        id: existing.try_get(0)?,
                        ..rule.clone()
                    },
                    already_existed: true,
                    covers_waiting: Vec::new(),
                });
            }
            tx.execute(
                "INSERT INTO rules (id, server, tool, pointer, kind, pattern, effect, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &rule.id,
                    &rule.server,
                    &rule.tool,
                    &rule.pointer,
                    &kind,
                    pattern,
                    &rule.effect.as_str(),
                    &now(),
                ],
            )
            .await?;
            insert_audit(
                tx,
                "user",
                "rule_added",
                None,
                None,
                None,
                &serde_json::to_value(rule).unwrap_or_default(),
            )
            .await?;
            Ok(AddedRule {
                rule: rule.clone(),
                already_existed: false,
                covers_waiting: Vec::new(),
            })
        })
    }

    fn remove_rule(&self, id: &str) -> port::Result<bool> {
        self.delete_audited(Deletable::Rule, id)
    }

    fn rules(&self) -> port::Result<Vec<RuleRow>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT id, server, tool, pointer, kind, pattern, effect, created_at
                     FROM rules ORDER BY created_at, id",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    let kind: &str = row.try_get(4)?;
                    let pattern: String = row.try_get(5)?;
                    let pattern = if kind == "regex" {
                        RulePattern::Regex(pattern)
                    } else {
                        RulePattern::Glob(pattern)
                    };
                    let effect: RuleEffect =
                        row.try_get::<_, &str>(6)?.parse().map_err(|message| {
                            StoreError::CorruptJson {
                                what: "rule effect",
                                message,
                            }
                        })?;
                    Ok::<_, Error>(RuleRow {
                        rule: ArgRule {
                            id: row.try_get(0)?,
                            server: row.try_get(1)?,
                            tool: row.try_get(2)?,
                            pointer: row.try_get(3)?,
                            pattern,
                            effect,
                        },
                        created_at: row.try_get(7)?,
                    })
                })
                .collect()
        })
    }
}
