import { describe, expect, it } from 'vitest';
import { writeFileSchema } from '../test/fixtures';
import { canonical, diffJson } from './diff';
import { checkEdit } from './schema';

describe('checkEdit', () => {
  it('accepts arguments that match the schema', () => {
    const check = checkEdit('{"path": "a.txt", "content": "x"}', writeFileSchema);
    expect(check).toEqual({ ok: true, value: { path: 'a.txt', content: 'x' } });
  });

  it('refuses broken JSON, non-objects and schema violations with a message', () => {
    expect(checkEdit('{"path": ', writeFileSchema).ok).toBe(false);
    expect(checkEdit('[1]', writeFileSchema)).toEqual({ ok: false, errors: ['the arguments must be a JSON object'] });
    const missing = checkEdit('{"path": "a.txt"}', writeFileSchema);
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.errors).toEqual(['arguments: Instance does not have required property "content".']);
    const wrongType = checkEdit('{"path": 3, "content": "x"}', writeFileSchema);
    if (!wrongType.ok) expect(wrongType.errors).toEqual(['/path: Instance type "number" is invalid. Expected "string".']);
    expect(wrongType.ok).toBe(false);
  });
});

describe('diffJson', () => {
  it('marks changed lines', () => {
    const lines = diffJson('{\n  "path": "a"\n}', '{\n  "path": "b"\n}');
    expect(lines.filter((l) => l.kind === 'removed').map((l) => l.text)).toEqual(['  "path": "a"']);
    expect(lines.filter((l) => l.kind === 'added').map((l) => l.text)).toEqual(['  "path": "b"']);
  });
});

describe('canonical', () => {
  it('sorts keys at every level so a reordering is no change', () => {
    expect(JSON.stringify(canonical({ b: 1, a: { d: [{ z: 1, y: 2 }], c: 2 } }))).toBe('{"a":{"c":2,"d":[{"y":2,"z":1}]},"b":1}');
  });
});
