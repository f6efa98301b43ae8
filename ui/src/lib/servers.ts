// The MCP server form of Settings: what a person types, to and from the engine's ServerConfig.
import type { ServerConfig } from './bindings/ServerConfig';

export type ServerForm = {
  name: string;
  kind: 'stdio' | 'http';
  command: string;
  /** One argument per line, so arguments may hold spaces. */
  args: string;
  /** `KEY=VALUE` per line. */
  env: string;
  cwd: string;
  url: string;
  /** `Name: value` per line. */
  headers: string;
};

export const emptyForm = (): ServerForm => ({ name: '', kind: 'stdio', command: '', args: '', env: '', cwd: '', url: '', headers: '' });

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

function pairs(text: string, separator: string, what: string): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf(separator);
    if (at <= 0) return `${what} "${line}" needs the form NAME${separator}VALUE`;
    out[line.slice(0, at).trim()] = line.slice(at + separator.length).trim();
  }
  return out;
}

/** The definition to send, or what is wrong with the form (the engine checks again). */
export function formToConfig(form: ServerForm): { config: ServerConfig } | { error: string } {
  if (!/^[A-Za-z0-9_-]+$/.test(form.name.trim())) return { error: 'The name takes letters, digits, - and _' };
  if (form.kind === 'stdio') {
    if (!form.command.trim()) return { error: 'The command is empty' };
    const env = pairs(form.env, '=', 'Environment variable');
    if (typeof env === 'string') return { error: env };
    return { config: { kind: 'stdio', command: form.command.trim(), args: lines(form.args), env, cwd: form.cwd.trim() || null } };
  }
  if (!/^https?:\/\/\S+$/.test(form.url.trim())) return { error: 'The URL must start with http:// or https://' };
  const headers = pairs(form.headers, ':', 'Header');
  if (typeof headers === 'string') return { error: headers };
  return { config: { kind: 'http', url: form.url.trim(), headers } };
}

/** A stored definition (as the engine lists it) back in the form, for editing. */
export function configToForm(name: string, config: unknown): ServerForm {
  const form = { ...emptyForm(), name };
  const c = (config ?? {}) as Partial<Record<string, unknown>>;
  if (c.kind === 'http') {
    form.kind = 'http';
    form.url = String(c.url ?? '');
    form.headers = Object.entries((c.headers ?? {}) as Record<string, string>)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\n');
  } else {
    form.command = String(c.command ?? '');
    form.args = ((c.args ?? []) as string[]).join('\n');
    form.env = Object.entries((c.env ?? {}) as Record<string, string>)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n');
    form.cwd = String(c.cwd ?? '');
  }
  return form;
}
