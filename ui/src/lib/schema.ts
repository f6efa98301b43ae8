// Checks edited arguments against the tool's JSON Schema as the person types. The engine checks
// again before anything runs; this only keeps an invalid edit from being submitted. The
// validator interprets schemas without generating code, so it works under the app's CSP.
import { Validator } from '@cfworker/json-schema';
import type { JsonValue } from './bindings/serde_json/JsonValue';

const cache = new WeakMap<object, Validator>();
/** Keywords that only summarise errors reported in more detail below them. */
const SUMMARIES = new Set(['properties', 'items', 'allOf', 'anyOf', 'oneOf', 'additionalProperties', '$ref']);

export type EditCheck = { ok: true; value: { [key: string]: JsonValue } } | { ok: false; errors: string[] };

export function checkEdit(text: string, schema: unknown): EditCheck {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, errors: [`not valid JSON: ${(e as Error).message}`] };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, errors: ['the arguments must be a JSON object'] };
  }
  if (schema && typeof schema === 'object') {
    let validator = cache.get(schema);
    if (!validator) {
      try {
        validator = new Validator(schema as object, '2020-12', false);
      } catch (e) {
        return { ok: false, errors: [`the tool's schema cannot be used: ${(e as Error).message}`] };
      }
      cache.set(schema, validator);
    }
    const result = validator.validate(value);
    if (!result.valid) {
      const detailed = result.errors.filter((e) => !SUMMARIES.has(e.keyword));
      const errors = (detailed.length ? detailed : result.errors).map(
        (e) => `${e.instanceLocation.replace(/^#/, '') || 'arguments'}: ${e.error}`,
      );
      return { ok: false, errors };
    }
  }
  return { ok: true, value: value as { [key: string]: JsonValue } };
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}
