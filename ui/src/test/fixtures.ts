import type { InboxItem } from '../lib/bindings/InboxItem';

export const writeFileSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, content: { type: 'string' } },
  required: ['path', 'content'],
  additionalProperties: false,
};

export function item(n: number, session = 'demo', overrides: Partial<InboxItem> = {}): InboxItem {
  return {
    approval_id: `apr_${n}`,
    tool_call_id: `call_${n}`,
    kind: 'tool_call',
    session,
    session_id: `ses_${session}`,
    server: 'builtin',
    tool: 'write_file',
    args: { path: `file${n}.txt`, content: 'hi' },
    args_hash: `hash_${n}`,
    why: 'builtin/write_file: approval required',
    created_at: `2026-11-23T10:00:0${n % 10}Z`,
    expires_at: null,
    description: 'Write a file in the workspace',
    input_schema: writeFileSchema,
    editable: true,
    ...overrides,
  };
}

/** A command whose right-to-left override makes `rm -rf ~ #` read as something harmless when rendered raw. */
export const RLO = '\u202E';
export const disguisedCommand = `rm -rf ~ #${RLO}txt.cod`;
