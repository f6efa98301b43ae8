// Which rows of a long fixed-height list are on screen (plus a margin), so 10,000 items render
// only a few dozen elements.

export type Window = { start: number; end: number; offset: number; total: number };

export function visibleWindow(count: number, rowHeight: number, scrollTop: number, viewport: number, overscan = 8): Window {
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + viewport) / rowHeight) + overscan);
  return { start: first, end: Math.max(first, last), offset: first * rowHeight, total: count * rowHeight };
}

/** The scrollTop that brings row `index` into view, or `null` when it already is. */
export function scrollToRow(index: number, rowHeight: number, scrollTop: number, viewport: number): number | null {
  const top = index * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + viewport) return top + rowHeight - viewport;
  return null;
}
