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

/** The arguments on one short line. */
export function argsLine(args: unknown, max = 140): string {
  let text: string;
  if (args && typeof args === 'object' && !Array.isArray(args)) {
    text = Object.entries(args as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
      .join(', ');
  } else {
    text = JSON.stringify(args);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
