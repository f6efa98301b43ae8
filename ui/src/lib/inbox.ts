// The inbox as rows: items grouped by session (groups in order of their oldest item, items
// oldest first), with a header row per session. Fixed-height rows for the virtual list.
import type { InboxItem } from './bindings/InboxItem';

export type Row = { kind: 'header'; session: string; count: number } | { kind: 'item'; item: InboxItem; index: number };

export function inboxRows(items: readonly InboxItem[]): { rows: Row[]; order: InboxItem[] } {
  const bySession = new Map<string, InboxItem[]>();
  for (const item of items) {
    const list = bySession.get(item.session);
    if (list) list.push(item);
    else bySession.set(item.session, [item]);
  }
  const rows: Row[] = [];
  const order: InboxItem[] = [];
  for (const [session, list] of bySession) {
    rows.push({ kind: 'header', session, count: list.length });
    for (const item of list) {
      rows.push({ kind: 'item', item, index: order.length });
      order.push(item);
    }
  }
  return { rows, order };
}

/** The arguments on one line, whole: `path: "a.txt", content: "hi"`. */
export function argsLine(args: unknown): string {
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    return Object.entries(args as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ');
  }
  return JSON.stringify(args);
}

/** The most characters of arguments a list row shows before it says it cut them. */
export const ARGS_SUMMARY_MAX = 140;

/**
 * [`argsLine`] cut to `max` characters, and whether anything was cut: a row must say so, since a
 * selection can be approved from the list. Counts code points, so an emoji is never split.
 */
export function argsSummary(args: unknown, max = ARGS_SUMMARY_MAX): { line: string; cut: boolean } {
  const chars = Array.from(argsLine(args));
  if (chars.length <= max) return { line: chars.join(''), cut: false };
  return { line: `${chars.slice(0, max - 1).join('')}…`, cut: true };
}

const AGENT_NAMES: Record<string, string> = { 'claude-code': 'Claude Code', codex: 'Codex', 'claude-desktop': 'Claude Desktop' };

/** Who asked, for another agent's call: the coding agent, or the MCP client's own name. */
export function agentLabel(item: Pick<InboxItem, 'agent' | 'client'>): string {
  if (item.agent === 'mcp-client') return item.client ?? 'MCP client';
  return AGENT_NAMES[item.agent ?? ''] ?? item.agent ?? '';
}

/** A folder shortened to its last two parts (the whole path goes in a title). */
export function shortPath(path: string): string {
  const parts = path.split('/').filter((p) => p.length > 0);
  return parts.length <= 2 ? path : `…/${parts.slice(-2).join('/')}`;
}
