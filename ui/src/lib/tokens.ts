// A file's text as lines of tokens, the shape CodeView renders. Kept apart from
// lib/highlight.ts so the plain form needs no grammar: the highlighter is loaded on first use.

export type Token = { text: string; cls: string };

/** Appends `text` (which may hold newlines) to `lines` as tokens of class `cls`. */
export function pushText(lines: Token[][], text: string, cls: string): void {
  text.split('\n').forEach((part, i) => {
    if (i > 0) lines.push([]);
    if (part) lines[lines.length - 1].push({ text: part, cls });
  });
}

/** `code` as unhighlighted lines. */
export function plainLines(code: string): Token[][] {
  const lines: Token[][] = [[]];
  pushText(lines, code, '');
  return lines;
}
