-- Airlock schema, version 3: when the engine handed a `running` call to its tool. A call is
-- invoked at most once: the engine claims it (sets invoked_at) before invoking it, and a
-- `running` call already claimed is reported as interrupted, never run again.
ALTER TABLE tool_calls ADD COLUMN invoked_at TEXT;
