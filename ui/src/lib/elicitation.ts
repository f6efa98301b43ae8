// The fields of an MCP elicitation form (a flat JSON Schema object: strings with formats,
// numbers, integers, booleans, single- and multi-select enums) and the answer built from them.

export type Field = {
  name: string;
  title: string;
  description: string | null;
  kind: 'text' | 'number' | 'integer' | 'boolean' | 'select' | 'multi';
  inputType: string;
  options: string[];
  required: boolean;
  initial: unknown;
};

type Schema = { properties?: Record<string, Record<string, unknown>>; required?: string[] };

const INPUT_TYPES: Record<string, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

function options(prop: Record<string, unknown>): string[] {
  if (Array.isArray(prop.enum)) return prop.enum.map(String);
  if (Array.isArray(prop.oneOf)) return prop.oneOf.map((o) => String((o as { const?: unknown }).const));
  return [];
}

export function formFields(schema: unknown): Field[] {
  const s = (schema && typeof schema === 'object' ? schema : {}) as Schema;
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties ?? {}).map(([name, prop]) => {
    const type = String(prop.type ?? 'string');
    const items = (prop.items ?? {}) as Record<string, unknown>;
    let kind: Field['kind'] = 'text';
    if (type === 'number') kind = 'number';
    else if (type === 'integer') kind = 'integer';
    else if (type === 'boolean') kind = 'boolean';
    else if (type === 'array' && options(items).length) kind = 'multi';
    else if (options(prop).length) kind = 'select';
    return {
      name,
      title: String(prop.title ?? name),
      description: typeof prop.description === 'string' ? prop.description : null,
      kind,
      inputType: INPUT_TYPES[String(prop.format)] ?? 'text',
      options: kind === 'multi' ? options(items) : options(prop),
      required: required.has(name),
      initial: prop.default ?? (kind === 'boolean' ? false : kind === 'multi' ? [] : ''),
    };
  });
}

/** The content to send: typed values, empty optional fields left out. */
export function formContent(fields: Field[], values: Record<string, unknown>): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === 'boolean') content[field.name] = Boolean(value);
    else if (field.kind === 'multi') content[field.name] = Array.isArray(value) ? value : [];
    else if (value === '' || value === undefined || value === null) continue;
    else if (field.kind === 'number') content[field.name] = Number(value);
    else if (field.kind === 'integer') content[field.name] = Math.trunc(Number(value));
    else content[field.name] = String(value);
  }
  return content;
}
