import type { DecisionKind } from '../lib/bindings/DecisionKind';
import type { DecisionRequest } from '../lib/bindings/DecisionRequest';
import type { InboxItem } from '../lib/bindings/InboxItem';

export const writeFileSchema = {
  type: 'object',
  properties: { path: { type: 'string' }, content: { type: 'string' } },
  required: ['path', 'content'],
  additionalProperties: false,
};

/** What the engine offers for an item of this kind (engine::decision::available_decisions), for
 *  fixtures that do not say: a test of what the UI shows passes `available_decisions` itself. */
export function offered(kind: InboxItem['kind'], editable: boolean): DecisionKind[] {
  if (kind === 'elicitation') return ['accept', 'decline', 'cancel'];
  if (kind === 'provider_tool_call') return ['approve', 'deny'];
  return editable ? ['approve', 'edit', 'deny', 'allow_for_chat', 'remember', 'grant'] : ['approve', 'deny', 'allow_for_chat', 'remember', 'grant'];
}

export function item(n: number, session = 'demo', overrides: Partial<InboxItem> = {}): InboxItem {
  const kind = overrides.kind ?? 'tool_call';
  const editable = overrides.editable ?? true;
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
    editable,
    available_decisions: offered(kind, editable),
    ...overrides,
  };
}

/** A command whose right-to-left override makes `rm -rf ~ #` read as something harmless when rendered raw. */
export const RLO = '\u202E';
export const disguisedCommand = `rm -rf ~ #${RLO}txt.cod`;

/** The form server-everything's `trigger-elicitation-request` sends (tests/mcp-servers, version
 * 2026.8.31: dist/tools/trigger-elicitation-request.js), in the server's order. */
export const everythingForm = {
  type: 'object',
  properties: {
    name: { title: 'String', type: 'string', description: 'Your full, legal name' },
    check: { title: 'Boolean', type: 'boolean', description: 'Agree to the terms and conditions' },
    firstLine: { title: 'String with default', type: 'string', description: 'Favorite first line of a story', default: 'It was a dark and stormy night.' },
    email: { title: 'String with email format', type: 'string', format: 'email', description: 'Your email address (will be verified, and never shared with anyone else)' },
    homepage: { type: 'string', format: 'uri', title: 'String with uri format', description: 'Portfolio / personal website' },
    birthdate: { title: 'String with date format', type: 'string', format: 'date', description: 'Your date of birth' },
    integer: { title: 'Integer', type: 'integer', description: 'Your favorite integer (do not give us your phone number, pin, or other sensitive info)', minimum: 1, maximum: 100, default: 42 },
    number: { title: 'Number in range 1-1000', type: 'number', description: 'Favorite number (there are no wrong answers)', minimum: 0, maximum: 1000, default: 3.14 },
    untitledSingleSelectEnum: { type: 'string', title: 'Untitled Single Select Enum', description: 'Choose your favorite friend', enum: ['Monica', 'Rachel', 'Joey', 'Chandler', 'Ross', 'Phoebe'], default: 'Monica' },
    untitledMultipleSelectEnum: { type: 'array', title: 'Untitled Multiple Select Enum', description: 'Choose your favorite instruments', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['Guitar', 'Piano', 'Violin', 'Drums', 'Bass'] }, default: ['Guitar'] },
    titledSingleSelectEnum: {
      type: 'string', title: 'Titled Single Select Enum', description: 'Choose your favorite hero',
      oneOf: [{ const: 'hero-1', title: 'Superman' }, { const: 'hero-2', title: 'Green Lantern' }, { const: 'hero-3', title: 'Wonder Woman' }],
      default: 'hero-1',
    },
    titledMultipleSelectEnum: {
      type: 'array', title: 'Titled Multiple Select Enum', description: 'Choose your favorite types of fish', minItems: 1, maxItems: 3,
      items: { anyOf: [{ const: 'fish-1', title: 'Tuna' }, { const: 'fish-2', title: 'Salmon' }, { const: 'fish-3', title: 'Trout' }] },
      default: ['fish-1'],
    },
    legacyTitledEnum: {
      type: 'string', title: 'Legacy Titled Single Select Enum', description: 'Choose your favorite type of pet',
      enum: ['pet-1', 'pet-2', 'pet-3', 'pet-4', 'pet-5'], enumNames: ['Cats', 'Dogs', 'Birds', 'Fish', 'Reptiles'], default: 'pet-1',
    },
  },
  required: ['name'],
};

/** The server's order of the form's fields (the engine's JSON sorts object keys by name). */
export const everythingOrder = Object.keys(everythingForm.properties);

/** The form as it arrives in the window: properties sorted by name, the order beside it. */
export const everythingFormSorted = {
  ...everythingForm,
  properties: Object.fromEntries(Object.entries(everythingForm.properties).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
};

/** A decision request read as the fields tests compare: approve, the deny's reason, the edit. */
export function flat(d: DecisionRequest): { approval_id: string; approve: boolean; reason: string | null; args: unknown; args_hash: string | null } {
  const { decision } = d;
  return {
    approval_id: d.approval_id,
    args_hash: d.args_hash,
    approve: decision.kind === 'approve' || (decision.kind === 'answer' && decision.action === 'accept'),
    reason: decision.kind === 'deny' ? decision.reason : null,
    args: decision.kind === 'approve' ? (decision.args ?? null) : null,
  };
}
