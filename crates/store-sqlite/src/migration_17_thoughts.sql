-- What a hosted agent thought before an answer (ACP `agent_thought_chunk`), kept beside the
-- message and never in its content, so it is never read as the answer. (Numbered 18: 17 is
-- another change's; renumbered on merge if that one is not there.)
ALTER TABLE messages ADD COLUMN thought TEXT;
