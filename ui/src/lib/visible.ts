// Text a person decides on, made safe to show. Arguments and everything a server supplies (names,
// descriptions, messages) may carry characters that change what is seen without being seen
// themselves: bidi overrides that reorder `rm -rf ~ #…` into something harmless-looking,
// zero-width characters, C0/C1 controls and terminal escapes (ESC). They are shown as visible
// `\u{XXXX}` escapes instead.
//
// Hand-written rather than a package: the set must be exactly the engine's
// (`is_hidden` in crates/core/src/display.rs) so the UI, CLI and notifications agree, and no
// maintained package ships that list; the code is a regex and a loop.

/** A run of ordinary text, or one hidden character (its code point). */
export type Segment = { text: string } | { hidden: number };

/** The engine's hidden set: controls except \n and \t, DEL, C1, soft hyphen, invisible format and bidi characters. */
const HIDDEN_CLASS =
  '\\u0000-\\u0008\\u000B-\\u001F\\u007F-\\u009F\\u00AD\\u061C\\u180E\\u200B-\\u200F\\u2028-\\u202E\\u2060-\\u2069\\uFEFF\\uFFF9-\\uFFFB';
const HIDDEN = new RegExp(`[${HIDDEN_CLASS}]`, 'gu');
/** For one-line places (list rows), where a newline or tab would silently become a space. */
const HIDDEN_ON_ONE_LINE = new RegExp(`[${HIDDEN_CLASS}\\n\\t]`, 'gu');

/** Unicode names of the hidden characters a person is most likely to meet; others are described by class. */
const NAMES: Record<number, string> = {
  0x00: 'NULL',
  0x08: 'BACKSPACE',
  0x09: 'CHARACTER TABULATION',
  0x0a: 'LINE FEED',
  0x0d: 'CARRIAGE RETURN',
  0x1b: 'ESCAPE',
  0x7f: 'DELETE',
  0x85: 'NEXT LINE',
  0x9b: 'CONTROL SEQUENCE INTRODUCER',
  0xad: 'SOFT HYPHEN',
  0x061c: 'ARABIC LETTER MARK',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
  0xfff9: 'INTERLINEAR ANNOTATION ANCHOR',
  0xfffa: 'INTERLINEAR ANNOTATION SEPARATOR',
  0xfffb: 'INTERLINEAR ANNOTATION TERMINATOR',
};

/** `text` cut into ordinary runs and hidden characters. With `oneLine`, newlines and tabs count as hidden. */
export function visibleSegments(text: string, oneLine = false): Segment[] {
  const segments: Segment[] = [];
  let from = 0;
  for (const match of text.matchAll(oneLine ? HIDDEN_ON_ONE_LINE : HIDDEN)) {
    if (match.index > from) segments.push({ text: text.slice(from, match.index) });
    segments.push({ hidden: match[0].codePointAt(0) ?? 0 });
    from = match.index + match[0].length;
  }
  if (from < text.length) segments.push({ text: text.slice(from) });
  return segments;
}

/** How a hidden character is written: `\n`, `\t`, else `\u{XXXX}` (as the engine writes it). */
export function escapeHidden(codePoint: number): string {
  if (codePoint === 0x0a) return '\\n';
  if (codePoint === 0x09) return '\\t';
  return `\\u{${codePoint.toString(16).toUpperCase().padStart(4, '0')}}`;
}

/** What a hidden character is, for a tooltip: `hidden character U+202E (RIGHT-TO-LEFT OVERRIDE)`. */
export function describeHidden(codePoint: number): string {
  const code = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES[codePoint] ?? (codePoint < 0x20 || (codePoint >= 0x7f && codePoint <= 0x9f) ? 'control character' : 'invisible character');
  return `hidden character ${code} (${name})`;
}

/** `text` with every hidden character written as its escape: for attributes, titles and `<option>`s. */
export function visibleText(text: string, oneLine = false): string {
  return text.replace(oneLine ? HIDDEN_ON_ONE_LINE : HIDDEN, (c) => escapeHidden(c.codePointAt(0) ?? 0));
}

/** Whether `text` holds any hidden character. */
export function hasHidden(text: string): boolean {
  return text.search(HIDDEN) !== -1;
}
