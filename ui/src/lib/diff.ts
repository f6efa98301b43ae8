// Diffs as a person reads them: line diffs (of pretty-printed JSON, of a file against its new
// content, of an edit's old and new text) with line numbers, and, for a changed line too long
// to compare by eye, the words that changed within it.
import { diffLines, diffWordsWithSpace } from 'diff';

/** A piece of a changed line: the same in both versions, or only in this one. */
export type WordPart = { changed: boolean; text: string };

export type DiffLine = {
  kind: 'same' | 'added' | 'removed';
  text: string;
  /** Line numbers in the old and new text (null on the side the line is not in). */
  oldNo?: number | null;
  newNo?: number | null;
  /** For a long changed line paired with its counterpart: the line cut into changed and unchanged words. */
  words?: WordPart[];
};

/** Changed lines at least this long are compared word by word. */
export const LONG_LINE = 60;

/** `after` against `before`, line by line (numbered unless `numbered` is false); long changed lines also word by word. */
export function diffText(before: string, after: string, numbered = true): DiffLine[] {
  return toLines(diffLines(before, after), numbered);
}

/** How long a file's diff may take before the file is shown as it is instead (a window must not hang). */
export const FILE_DIFF_TIMEOUT_MS = 500;

/** [`diffText`] of two versions of a file, or null when comparing them would take too long. */
export function diffFile(before: string, after: string): DiffLine[] | null {
  const parts = diffLines(before, after, { timeout: FILE_DIFF_TIMEOUT_MS });
  return parts ? toLines(parts, true) : null;
}

function toLines(parts: { added?: boolean; removed?: boolean; value: string }[], numbered: boolean): DiffLine[] {
  const lines: DiffLine[] = [];
  let oldNo = 1;
  let newNo = 1;
  for (const part of parts) {
    const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    for (const text of part.value.replace(/\n$/, '').split('\n')) {
      const line: DiffLine = { kind, text };
      if (numbered) {
        line.oldNo = kind === 'added' ? null : oldNo++;
        line.newNo = kind === 'removed' ? null : newNo++;
      }
      lines.push(line);
    }
  }
  return withWords(lines);
}

/**
 * Pairs each run of removed lines with the added lines right after it, line for line, and marks
 * the changed words of pairs where either line is long: a changed flag in a 200-character
 * command line is invisible in a line diff.
 */
export function withWords(lines: DiffLine[]): DiffLine[] {
  for (let i = 0; i < lines.length; ) {
    if (lines[i].kind !== 'removed') {
      i++;
      continue;
    }
    let removedEnd = i;
    while (removedEnd < lines.length && lines[removedEnd].kind === 'removed') removedEnd++;
    let addedEnd = removedEnd;
    while (addedEnd < lines.length && lines[addedEnd].kind === 'added') addedEnd++;
    const pairs = Math.min(removedEnd - i, addedEnd - removedEnd);
    for (let k = 0; k < pairs; k++) {
      const old = lines[i + k];
      const now = lines[removedEnd + k];
      if (old.text.length < LONG_LINE && now.text.length < LONG_LINE) continue;
      const parts = diffWordsWithSpace(old.text, now.text);
      old.words = parts.filter((p) => !p.added).map((p) => ({ changed: !!p.removed, text: p.value }));
      now.words = parts.filter((p) => !p.removed).map((p) => ({ changed: !!p.added, text: p.value }));
    }
    i = Math.max(addedEnd, i + 1);
  }
  return lines;
}

/** The edit shown as a line diff of the pretty-printed JSON. */
export function diffJson(before: string, after: string): DiffLine[] {
  return diffText(before, after, false);
}

/** How many lines a diff removes and adds. */
export function diffStat(lines: readonly DiffLine[]): { added: number; removed: number } {
  return {
    added: lines.filter((l) => l.kind === 'added').length,
    removed: lines.filter((l) => l.kind === 'removed').length,
  };
}

/** The value with object keys sorted at every level, so reordering keys is not a change. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = canonical((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}
