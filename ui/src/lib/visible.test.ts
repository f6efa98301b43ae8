import { describe, expect, it } from 'vitest';
import { describeHidden, escapeHidden, hasHidden, visibleSegments, visibleText } from './visible';

describe('visibleText', () => {
  it('escapes bidi overrides and isolates, so `rm -rf ~ #` cannot pass as something harmless', () => {
    expect(visibleText('rm -rf ~ #\u202Etxt.cod')).toBe('rm -rf ~ #\\u{202E}txt.cod');
    for (const c of [0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069]) {
      expect(visibleText(`a${String.fromCodePoint(c)}b`)).toBe(`a\\u{${c.toString(16).toUpperCase()}}b`);
    }
  });

  it('escapes zero-width characters, line and paragraph separators and the byte-order mark', () => {
    expect(visibleText('a\u200Bb\u200Cc\u200Dd\u200Ee\u200Ff')).toBe('a\\u{200B}b\\u{200C}c\\u{200D}d\\u{200E}e\\u{200F}f');
    expect(visibleText('x\u2028y\u2029z\uFEFF')).toBe('x\\u{2028}y\\u{2029}z\\u{FEFF}');
  });

  it('escapes C0 controls, DEL and C1 controls, terminal escape sequences included', () => {
    expect(visibleText('\u001B[2Jcleared')).toBe('\\u{001B}[2Jcleared');
    expect(visibleText('nul\u0000 bell\u0007 cr\r del\u007F')).toBe('nul\\u{0000} bell\\u{0007} cr\\u{000D} del\\u{007F}');
    expect(visibleText('c1\u0080 csi\u009B31m end\u009F')).toBe('c1\\u{0080} csi\\u{009B}31m end\\u{009F}');
  });

  it('keeps newlines and tabs, except on one line where they are escaped too', () => {
    expect(visibleText('line\nbreak\ttab')).toBe('line\nbreak\ttab');
    expect(visibleText('line\nbreak\ttab', true)).toBe('line\\nbreak\\ttab');
  });

  it('leaves ordinary text, other scripts, surrogate pairs and emoji untouched', () => {
    for (const text of ['plain ASCII', 'émoji 🚀 and ünïcode', 'עברית and العربية', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👍🏽', '']) {
      expect(visibleText(text)).toBe(text);
      expect(hasHidden(text)).toBe(false);
    }
  });

  it('names each escaped character for its tooltip', () => {
    expect(describeHidden(0x202e)).toBe('hidden character U+202E (RIGHT-TO-LEFT OVERRIDE)');
    expect(describeHidden(0x1b)).toBe('hidden character U+001B (ESCAPE)');
    expect(describeHidden(0x01)).toBe('hidden character U+0001 (control character)');
    expect(describeHidden(0x0090)).toBe('hidden character U+0090 (control character)');
    expect(escapeHidden(0x202e)).toBe('\\u{202E}');
  });
});

describe('visibleSegments', () => {
  it('splits text into ordinary runs and hidden code points', () => {
    expect(visibleSegments('ls \u202Eabc\u200B')).toEqual([{ text: 'ls ' }, { hidden: 0x202e }, { text: 'abc' }, { hidden: 0x200b }]);
    expect(visibleSegments('\u001B\u001B')).toEqual([{ hidden: 0x1b }, { hidden: 0x1b }]);
  });

  it('keeps a surrogate pair next to a hidden character whole', () => {
    expect(visibleSegments('🚀\u202E🚀')).toEqual([{ text: '🚀' }, { hidden: 0x202e }, { text: '🚀' }]);
  });

  it('returns ordinary text as one run, and nothing for an empty string', () => {
    expect(visibleSegments('a\nb\tc')).toEqual([{ text: 'a\nb\tc' }]);
    expect(visibleSegments('a\nb', true)).toEqual([{ text: 'a' }, { hidden: 0x0a }, { text: 'b' }]);
    expect(visibleSegments('')).toEqual([]);
  });
});
