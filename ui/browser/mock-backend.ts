// A fake shell for the built UI in a plain browser: answers the app's commands from memory via
// mockIPC. Bundled as one script (vite.mock.config.ts) and injected by Playwright before the page.
import { mockIPC } from '@tauri-apps/api/mocks';
import type { DecisionRequest } from '../src/lib/bindings/DecisionRequest';
import type { InboxItem } from '../src/lib/bindings/InboxItem';

declare global {
  interface Window {
    __airlockMock: { items: number; decided: DecisionRequest[]; calls: string[] };
  }
}

const schema = {
  type: 'object',
  properties: { path: { type: 'string' }, content: { type: 'string' } },
  required: ['path', 'content'],
  additionalProperties: false,
};
const sessions = ['research', 'ops', 'release-notes', 'cleanup'];

function item(n: number): InboxItem {
  const session = sessions[n % sessions.length];
  return {
    approval_id: `apr_${n}`,
    tool_call_id: `call_${n}`,
    kind: 'tool_call',
    session,
    session_id: `ses_${session}`,
    server: 'builtin',
    tool: n % 3 === 0 ? 'run_command' : 'write_file',
    args: n % 3 === 0 ? { command: `make test-${n}` } : { path: `notes/${n}.md`, content: `Draft ${n}` },
    args_hash: `hash_${n}`,
    why: 'tool setting for builtin/write_file: approval required',
    created_at: new Date(Date.UTC(2026, 10, 23, 10, 0, n % 60)).toISOString(),
    expires_at: null,
    description: 'Create or overwrite a file in the workspace.',
    input_schema: schema,
    editable: true,
    available_decisions: ['approve', 'edit', 'deny', 'allow_for_chat', 'remember', 'grant'],
  };
}

const state = window.__airlockMock ?? { items: 10_000, decided: [], calls: [] };
window.__airlockMock = state;
let inbox = Array.from({ length: state.items }, (_, n) => item(n));

mockIPC(
  (cmd, args) => {
    state.calls.push(cmd);
    const a = (args ?? {}) as Record<string, unknown>;
    switch (cmd) {
      case 'settings':
        // A provider is set: the app opens on its screens, not on the first-run Setup.
        return { provider: { kind: 'openai_chat', base_url: 'http://127.0.0.1:9/v1', model: 'mock' } };
      case 'list_sessions':
        return sessions.map((name) => ({
          id: `ses_${name}`,
          name,
          mode: null,
          status: 'idle',
          last_error: null,
          created_at: '2026-11-23T10:00:00Z',
          updated_at: '2026-11-23T10:00:00Z',
        }));
      case 'inbox':
        return inbox;
      case 'transcript': {
        // The first session's turn: a text, then the oldest pending call of that session.
        const pending = inbox.find((i) => i.session === a.session);
        const calls = pending
          ? [
              {
                id: pending.tool_call_id,
                session_id: pending.session_id,
                message_id: 2,
                position: 0,
                provider_call_id: 'p1',
                model_name: `${pending.server}__${pending.tool}`,
                server: pending.server,
                tool: pending.tool,
                raw_args: JSON.stringify(pending.args),
                args: pending.args,
                args_hash: pending.args_hash,
                state: 'pending',
                policy_step: null,
                policy_why: pending.why,
                run_args: null,
                result: null,
                created_at: pending.created_at,
                updated_at: pending.created_at,
              },
            ]
          : [];
        return [
          { id: 1, session_id: `ses_${a.session}`, role: 'user', content: 'Write the notes', created_at: '', calls: [] },
          { id: 2, session_id: `ses_${a.session}`, role: 'assistant', content: 'I will write them.', created_at: '', calls },
        ];
      }
      case 'audit':
        return [];
      case 'paused':
        return false;
      case 'file_on_disk': {
        // What is on disk for the item's path, after a while (so a test can see it arrive).
        const found = inbox.find((i) => i.approval_id === a.approvalId);
        const path = String((found?.args as { path?: string } | undefined)?.path ?? '');
        const lines = Array.from({ length: 30 }, (_, k) => `line ${k} of the notes as they are on disk now`);
        return new Promise((done) => setTimeout(() => done({ state: 'text', path, content: `${lines.join('\n')}\n` }), 300));
      }
      case 'servers':
        return [];
      case 'decide': {
        const decisions = a.decisions as DecisionRequest[];
        state.decided.push(...decisions);
        const gone = new Set(decisions.map((d) => d.approval_id));
        inbox = inbox.filter((i) => !gone.has(i.approval_id));
        return decisions.map((d) => ({ approval_id: d.approval_id, error: null }));
      }
      default:
        return null;
    }
  },
  { shouldMockEvents: true },
);
