// The inbox as rows: items grouped by session, or by tool (server/tool: "write_file × 12"), groups
// in order of their oldest item, items oldest first, with a header row per group. A tool group
// may be collapsed to its header. Fixed-height rows for the virtual list.
import { AGENT_NAMES } from './bindings/agents';
import type { InboxItem } from './bindings/InboxItem';
import { cutMiddle } from './callView';

export type GroupBy = 'session' | 'tool';

export type Header = {
  kind: 'header';
  key: string;
  /** The session's title (an agent's: its folder and first prompt), or `server/tool`. */
  label: string;
  count: number;
  ids: string[];
  /** By tool: the argument fields whose values differ between the group's items (the rows show
   *  only these), and those every item has alike (the header shows them once). */
  differing: string[] | null;
  same: Record<string, unknown> | null;
  collapsed: boolean;
};

export type Row = Header | { kind: 'item'; item: InboxItem; index: number };

function groupKey(item: InboxItem, by: GroupBy, sessionLabel: (name: string) => string): [string, string] {
  return by === 'session' ? [`s:${item.session}`, sessionLabel(item.session)] : [`t:${item.server}\u001f${item.tool}`, `${item.server}/${item.tool}`];
}

export function inboxRows(
  items: readonly InboxItem[],
  by: GroupBy = 'session',
  collapsed: ReadonlySet<string> = new Set(),
  sessionLabel: (name: string) => string = (name) => name,
): { rows: Row[]; order: InboxItem[] } {
  const groups = new Map<string, { label: string; list: InboxItem[] }>();
  for (const item of items) {
    const [key, label] = groupKey(item, by, sessionLabel);
    const group = groups.get(key);
    if (group) group.list.push(item);
    else groups.set(key, { label, list: [item] });
  }
  const rows: Row[] = [];
  const order: InboxItem[] = [];
  for (const [key, { label, list }] of groups) {
    const fields = by === 'tool' ? splitFields(list.map((i) => i.args)) : null;
    const isCollapsed = by === 'tool' && collapsed.has(key);
    rows.push({
      kind: 'header',
      key,
      label,
      count: list.length,
      ids: list.map((i) => i.approval_id),
      differing: fields?.differing ?? null,
      same: fields?.same ?? null,
      collapsed: isCollapsed,
    });
    for (const item of list) {
      if (!isCollapsed) rows.push({ kind: 'item', item, index: order.length });
      order.push(item);
    }
  }
  return { rows, order };
}

/** The fields of JSON objects that differ between them, and those all of them have alike. */
export function splitFields(argsList: readonly unknown[]): { differing: string[]; same: Record<string, unknown> } {
  const objects = argsList.map((a) => (a && typeof a === 'object' && !Array.isArray(a) ? (a as Record<string, unknown>) : {}));
  const keys = [...new Set(objects.flatMap((o) => Object.keys(o)))];
  const differing: string[] = [];
  const same: Record<string, unknown> = {};
  for (const key of keys) {
    const first = JSON.stringify(objects[0]?.[key]);
    if (objects.every((o) => key in o && JSON.stringify(o[key]) === first)) same[key] = objects[0][key];
    else differing.push(key);
  }
  return { differing, same };
}

/** Only these fields of the arguments (all of them when `fields` is null or empty). */
export function pickFields(args: unknown, fields: readonly string[] | null): unknown {
  if (!fields || fields.length === 0 || !args || typeof args !== 'object' || Array.isArray(args)) return args;
  const source = args as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => f in source).map((f) => [f, source[f]]));
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
 * [`argsLine`] cut to `max` characters in the middle, never at the end (a dangerous tail stays in
 * sight), and whether anything was cut: a row must say so, since a selection can be approved
 * from the list. Counts code points, so an emoji is never split.
 */
export function argsSummary(args: unknown, max = ARGS_SUMMARY_MAX): { line: string; cut: boolean } {
  const { text, cut } = cutMiddle(argsLine(args), max);
  return { line: text, cut };
}


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
