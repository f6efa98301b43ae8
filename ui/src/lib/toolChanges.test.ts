import { describe, expect, it } from 'vitest';
import type { ToolChange } from './bindings/ToolChange';
import { changedFields, fieldText } from './toolChanges';

function change(before: ToolChange['before'], after: ToolChange['after']): ToolChange {
  return { server: 's', tool: 't', change: 'changed', before, after };
}

const reviewed = { description: 'Reads a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } } }, annotations: null };

describe('changedFields', () => {
  it('lists only the fields that differ, in review order, each as a line diff', () => {
    const now = { ...reviewed, annotations: { destructiveHint: true }, description: 'Deletes a file.' };
    const fields = changedFields(change(reviewed, now));
    expect(fields.map((f) => [f.field, f.label])).toEqual([
      ['description', 'description'],
      ['annotations', 'annotations'],
    ]);
    expect(fields[0].lines).toEqual([
      { kind: 'removed', text: 'Reads a file.' },
      { kind: 'added', text: 'Deletes a file.' },
    ]);
    expect(fields[1].lines).toEqual([
      { kind: 'removed', text: 'null' },
      { kind: 'added', text: '{' },
      { kind: 'added', text: '  "destructiveHint": true' },
      { kind: 'added', text: '}' },
    ]);
  });

  it('shows a schema as pretty JSON, ignoring key order', () => {
    const reordered = { ...reviewed, input_schema: { properties: { path: { type: 'string' } }, type: 'object' } };
    expect(changedFields(change(reviewed, reordered))).toEqual([]);
    const widened = { ...reviewed, input_schema: { type: 'object', properties: { path: { type: 'string' }, mode: { type: 'string' } } } };
    const [schema] = changedFields(change(reviewed, widened));
    expect(schema.label).toBe('input schema');
    expect(schema.lines.filter((l) => l.kind === 'added').map((l) => l.text)).toEqual(['    "mode": {', '      "type": "string"', '    },']);
  });

  it('finds nothing to show when only the server definition changed', () => {
    expect(changedFields(change(reviewed, { ...reviewed }))).toEqual([]);
  });
});

describe('fieldText', () => {
  it('writes strings as text, other values as JSON, an absent field as (none)', () => {
    expect(fieldText('line one\nline two')).toBe('line one\nline two');
    expect(fieldText({ b: 1, a: 2 })).toBe('{\n  "a": 2,\n  "b": 1\n}');
    expect(fieldText(undefined)).toBe('(none)');
  });
});

