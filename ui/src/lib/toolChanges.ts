// A server's changed tools as the person reviews them before their suspended grants apply again:
// each pinned field that differs, as a line diff of the definition as reviewed and as now.
import type { ToolChange } from './bindings/ToolChange';
import { canonical, diffJson, type DiffLine } from './diff';

/** The fields of a tool's definition the engine pins (crates/store-sqlite/src/pins.rs), in review order. */
export const PINNED_FIELDS = ['description', 'input_schema', 'annotations'] as const;

export type FieldChange = {
  field: (typeof PINNED_FIELDS)[number];
  /** The field as the engine names it in `change` ("input schema"). */
  label: string;
  lines: DiffLine[];
};

/** A field's value as a person reads it: a string as itself, anything else as pretty JSON with sorted keys. */
export function fieldText(value: unknown): string {
  if (value === undefined) return '(none)';
  if (typeof value === 'string') return value;
  return JSON.stringify(canonical(value), null, 2);
}

function fieldOf(definition: unknown, field: string): unknown {
  return definition && typeof definition === 'object' && !Array.isArray(definition) ? (definition as Record<string, unknown>)[field] : undefined;
}

/** Compared as the engine compares them: by value, key order aside. */
function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/**
 * The pinned fields that differ between the definition as reviewed and as now. Empty when only
 * the server's own definition (command, arguments, environment or URL) changed.
 */
export function changedFields(change: ToolChange): FieldChange[] {
  return PINNED_FIELDS.flatMap((field) => {
    const before = fieldOf(change.before, field);
    const after = fieldOf(change.after, field);
    if (sameValue(before, after)) return [];
    return [{ field, label: field.replace('_', ' '), lines: diffJson(fieldText(before), fieldText(after)) }];
  });
}

