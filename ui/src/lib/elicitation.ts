// The fields of an MCP elicitation form and the answer built from them. The form is a flat JSON
// Schema object whose properties are the spec's primitives (2025-11-25): strings (formats
// email, uri, date, date-time; min/max length), numbers and integers (minimum/maximum),
// booleans, single-select enums (plain `enum`, legacy `enumNames`, titled `oneOf` of
// {const, title}) and multi-select enums (an array of `items.enum` or titled `items.anyOf`,
// minItems/maxItems); each may have a default.
import type { InboxItem } from './bindings/InboxItem';

export type Option = { value: string; label: string };

export type Field = {
  name: string;
  title: string;
  description: string | null;
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'select' | 'multi';
  /** The input's type for a text field: email, url, date, datetime-local or text. */
  inputType: string;
  /** The schema's `format` of a text field, if any. */
  format: string | null;
  options: Option[];
  required: boolean;
  /** minimum/maximum (numbers), minLength/maxLength (text), minItems/maxItems (multi-select). */
  min: number | null;
  max: number | null;
  initial: unknown;
};

type Prop = Record<string, unknown>;
type Schema = { properties?: Record<string, Prop>; required?: string[] };

const INPUT_TYPES: Record<string, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

/** The choices of a select: `enum` (labelled by `enumNames` when given) or titled `oneOf`/`anyOf`. */
function options(prop: Prop): Option[] {
  if (Array.isArray(prop.enum)) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((value, i) => ({ value: String(value), label: String(names[i] ?? value) }));
  }
  const titled = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : [];
  return titled
    .filter((o): o is Prop => !!o && typeof o === 'object' && 'const' in o)
    .map((o) => ({ value: String(o.const), label: String(o.title ?? o.const) }));
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** A date-time (RFC 3339) as a datetime-local input shows it: local time, to the minute. */
export function toLocalInput(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** A datetime-local input's value as the RFC 3339 date-time the schema asks for. */
function fromLocalInput(value: string): string {
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? value : at.toISOString();
}

/** The form's fields, in the server's order when it is known (`order`: JSON objects on the
 * way here may have sorted the properties by name). */
export function formFields(schema: unknown, order: readonly string[] | null = null): Field[] {
  const s = (schema && typeof schema === 'object' ? schema : {}) as Schema;
  const required = new Set(s.required ?? []);
  const properties = s.properties ?? {};
  const names = Object.keys(properties);
  const ordered = order ? [...order.filter((n) => n in properties), ...names.filter((n) => !order.includes(n))] : names;
  return ordered.map((name) => {
    const prop = properties[name] ?? {};
    const type = String(prop.type ?? 'string');
    const items = (prop.items ?? {}) as Prop;
    let kind: Field['kind'] = 'text';
    if (type === 'number') kind = 'number';
    else if (type === 'integer') kind = 'integer';
    else if (type === 'boolean') kind = 'boolean';
    else if (type === 'array') kind = 'multi';
    else if (options(prop).length) kind = 'select';
    const format = kind === 'text' && typeof prop.format === 'string' ? prop.format : null;
    const [min, max] =
      kind === 'number' || kind === 'integer'
        ? [num(prop.minimum), num(prop.maximum)]
        : kind === 'multi'
          ? [num(prop.minItems), num(prop.maxItems)]
          : kind === 'text'
            ? [num(prop.minLength), num(prop.maxLength)]
            : [null, null];
    let initial: unknown = prop.default;
    if (kind === 'multi') initial = Array.isArray(prop.default) ? prop.default.map(String) : [];
    else if (kind === 'boolean') initial = prop.default === true;
    else if (format === 'date-time') initial = toLocalInput(prop.default);
    else if (initial === undefined || initial === null) initial = '';
    return {
      name,
      title: String(prop.title ?? name),
      description: typeof prop.description === 'string' ? prop.description : null,
      kind,
      inputType: (format && INPUT_TYPES[format]) ?? 'text',
      format,
      options: kind === 'multi' ? options(items) : options(prop),
      required: required.has(name),
      min,
      max,
      initial,
    };
  });
}

/** The form's values before the person changes anything: the server's defaults. */
export function initialValues(fields: Field[]): Record<string, unknown> {
  return Object.fromEntries(fields.map((f) => [f.name, f.initial]));
}

function empty(value: unknown): boolean {
  return value === '' || value === undefined || value === null || (typeof value === 'number' && Number.isNaN(value));
}

/** What is wrong with one field's value, in words that name the limit; null when it is fine.
 * (Formats — email, url, date — are the input's own check.) */
export function fieldProblem(field: Field, value: unknown): 'missing' | string | null {
  if (field.kind === 'boolean') return null;
  if (field.kind === 'multi') {
    const chosen = Array.isArray(value) ? value.length : 0;
    if (chosen === 0 && field.required && (field.min ?? 1) > 0) return 'missing';
    if (chosen === 0 && !field.required) return null;
    if (field.min !== null && chosen < field.min) return `choose at least ${field.min}`;
    if (field.max !== null && chosen > field.max) return `choose at most ${field.max}`;
    return null;
  }
  if (empty(value)) return field.required ? 'missing' : null;
  if (field.kind === 'number' || field.kind === 'integer') {
    const n = Number(value);
    if (!Number.isFinite(n)) return 'a number';
    if (field.kind === 'integer' && !Number.isInteger(n)) return 'a whole number';
    if (field.min !== null && n < field.min) return `at least ${field.min}`;
    if (field.max !== null && n > field.max) return `at most ${field.max}`;
    return null;
  }
  if (field.kind === 'text') {
    const length = String(value).length;
    if (field.min !== null && length < field.min) return `at least ${field.min} characters`;
    if (field.max !== null && length > field.max) return `at most ${field.max} characters`;
  }
  return null;
}

/** The limits a field has, said under it ("1 to 100", "choose 1 to 3"); null when none. */
export function fieldLimits(field: Field): string | null {
  const { min, max } = field;
  if (min === null && max === null) return null;
  const range = min !== null && max !== null ? `${min} to ${max}` : min !== null ? `at least ${min}` : `at most ${max}`;
  if (field.kind === 'multi') return `choose ${range}`;
  if (field.kind === 'text') return `${range} characters`;
  return range;
}

/** The content to send: typed values, empty optional fields left out. */
export function formContent(fields: Field[], values: Record<string, unknown>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'boolean') content[field.name] = Boolean(value);
    else if (field.kind === 'multi') {
      // None ticked where the form wants at least one, and optional: left out rather than refused.
      const chosen = Array.isArray(value) ? value.map(String) : [];
      if (chosen.length > 0 || field.required || (field.min ?? 0) === 0) content[field.name] = chosen;
    } else if (empty(value)) continue;
    else if (field.kind === 'number' || field.kind === 'integer') content[field.name] = Number(value);
    else if (field.format === 'date-time') content[field.name] = fromLocalInput(String(value));
    else content[field.name] = String(value);
  }
  return content;
}

/** An elicitation item's message, form and the server's order of its fields. */
export function elicitationOf(item: InboxItem): { message: string | null; schema: unknown; order: string[] | null } {
  const args = (item.args && typeof item.args === 'object' && !Array.isArray(item.args) ? item.args : {}) as Record<string, unknown>;
  const order = Array.isArray(args.property_order) ? args.property_order.map(String) : null;
  return { message: item.message ?? (typeof args.message === 'string' ? args.message : null), schema: item.schema ?? args.schema ?? null, order };
}

/** The tool call an item waits in: its own (an approval), or for a server's question, the call
 * that was running on that server when it asked. */
export function waitingCallOf(item: InboxItem): string | null {
  if (item.tool_call_id !== null) return item.tool_call_id;
  if (item.kind !== 'elicitation') return null;
  const args = item.args as { tool_call_id?: unknown } | null;
  return typeof args?.tool_call_id === 'string' ? args.tool_call_id : null;
}
