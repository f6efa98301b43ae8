// Generated from crates/agents (AGENTS) by crates/resident/src/bindings.rs. Do not edit.

/** Each agent's name as people write it, by its name in Airlock. */
export const AGENT_NAMES: Record<string, string> = {
  "claude-code": "Claude Code",
  "codex": "Codex",
  "copilot": "GitHub Copilot CLI",
  "qwen": "Qwen Code",
  "gemini": "Gemini CLI",
  "cursor": "Cursor",
  "goose": "goose",
  "claude-desktop": "Claude Desktop",
  "mcp-client": "MCP client",
};

/** The agents whose hooks Airlock answers: their own tools are `NAME/TOOL`. */
export const HOOK_AGENTS: string[] = ["claude-code", "codex", "copilot", "qwen", "gemini", "cursor", "goose"];
