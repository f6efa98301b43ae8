import { describe, expect, it } from 'vitest';
import { argsLine, argsSummary } from './inbox';

describe('argsLine', () => {
  it('puts the arguments on one line, whole', () => {
    expect(argsLine({ path: 'a.txt', n: 2 })).toBe('path: "a.txt", n: 2');
    expect(argsLine({ command: 'x'.repeat(500) })).toHaveLength(500 + 'command: ""'.length);
    expect(argsLine(['a'])).toBe('["a"]');
  });
});

describe('argsSummary', () => {
  it('says when it cut the arguments', () => {
    expect(argsSummary({ path: 'a.txt' })).toEqual({ line: 'path: "a.txt"', cut: false });
    const long = argsSummary({ command: 'x'.repeat(500) });
    expect(long.cut).toBe(true);
    expect(Array.from(long.line)).toHaveLength(140);
    expect(long.line.endsWith('…')).toBe(true);
  });

  it('never cuts an emoji in half', () => {
    const { line, cut } = argsSummary({ e: '🚀'.repeat(200) }, 10);
    expect(cut).toBe(true);
    expect(line).toBe('e: "🚀🚀🚀🚀🚀…');
  });
});
