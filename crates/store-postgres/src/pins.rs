//! The rug-pull guard: pins of each MCP tool's definition. A changed pin suspends the tool's
//! standing grants until the person reviews it.

use crate::audit::insert_audit;
use crate::{PostgresStore, parse_json};
use airlock_store_port::{self as port, PinCheck, written};
use serde_json::{Value, json};

impl port::Pins for PostgresStore {
    fn check_pin(
        &self,
        server: &str,
        tool: &str,
        definition: &Value,
        hash: &str,
    ) -> port::Result<PinCheck> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT pinned_hash, pinned, change, current_hash FROM tool_pins
                     WHERE server = $1 AND tool = $2 FOR UPDATE",
                    &[&server, &tool],
                )
                .await?;
            let Some(row) = row else {
                tx.execute(
                    "INSERT INTO tool_pins (server, tool, pinned_hash, pinned, current_hash, current)
                     VALUES ($1, $2, $3, $4, $3, $4) ON CONFLICT DO NOTHING",
                    &[&server, &tool, &hash, &definition.to_string()],
                )
                .await?;
                return Ok(PinCheck::New);
            };
            let pinned_hash: &str = row.try_get(0)?;
            let pinned: &str = row.try_get(1)?;
            let change: Option<String> = row.try_get(2)?;
            let current_hash: &str = row.try_get(3)?;
            // The same definition as pinned and as last seen: nothing to write.
            if pinned_hash == hash && current_hash == hash {
                return Ok(change.map_or(PinCheck::Same, PinCheck::Changed));
            }
            let change = if pinned_hash != hash {
                Some(written::what_changed(
                    &parse_json(pinned, "tool pin")?,
                    definition,
                ))
            } else {
                change
            };
            tx.execute(
                "UPDATE tool_pins SET current_hash = $3, current = $4, change = $5
                 WHERE server = $1 AND tool = $2",
                &[&server, &tool, &hash, &definition.to_string(), &change],
            )
            .await?;
            // Recorded once per new definition, not at every listing of the same one.
            if let Some(what) = change.as_ref().filter(|_| current_hash != hash) {
                insert_audit(
                    tx,
                    "engine",
                    "tool_changed",
                    None,
                    None,
                    None,
                    &json!({"server": server, "tool": tool, "change": what}),
                )
                .await?;
            }
            Ok(change.map_or(PinCheck::Same, PinCheck::Changed))
        })
    }

    fn accept_pin(&self, server: &str, tool: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            let changed = tx
                .execute(
                    "UPDATE tool_pins SET pinned_hash = current_hash, pinned = current, change = NULL
                     WHERE server = $1 AND tool = $2 AND change IS NOT NULL",
                    &[&server, &tool],
                )
                .await?
                > 0;
            if changed {
                insert_audit(
                    tx,
                    "user",
                    "tool_change_reviewed",
                    None,
                    None,
                    None,
                    &json!({"server": server, "tool": tool}),
                )
                .await?;
            }
            Ok(changed)
        })
    }

    fn current_definition(&self, server: &str, tool: &str) -> port::Result<Option<Value>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT current FROM tool_pins WHERE server = $1 AND tool = $2",
                    &[&server, &tool],
                )
                .await?;
            row.map(|row| parse_json(row.try_get(0)?, "tool definition"))
                .transpose()
        })
    }

    fn tool_changes(&self, server: &str) -> port::Result<Vec<(String, String, Value, Value)>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT tool, change, pinned, current FROM tool_pins
                     WHERE server = $1 AND change IS NOT NULL ORDER BY tool",
                    &[&server],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    Ok((
                        row.try_get(0)?,
                        row.try_get(1)?,
                        parse_json(row.try_get(2)?, "tool pin")?,
                        parse_json(row.try_get(3)?, "tool definition")?,
                    ))
                })
                .collect()
        })
    }

    fn suspended_tools(&self) -> port::Result<Vec<(String, String, String)>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT server, tool, change FROM tool_pins WHERE change IS NOT NULL",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
                .collect()
        })
    }
}
