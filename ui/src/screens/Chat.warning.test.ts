import { render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CallRow } from '../lib/bindings/CallRow';
import type { MessageRow } from '../lib/bindings/MessageRow';
import { app } from '../lib/state.svelte';
import { item } from '../test/fixtures';
import Chat from './Chat.svelte';

// jsdom has no scrolling; the chat scrolls its stream to the end.
Element.prototype.scrollTo ??= function () {};

function call(n: number): CallRow {
  return {
    id: `call_${n}`,
    session_id: 'ses_demo',
    message_id: 1,
    position: n,
    provider_call_id: `p${n}`,
    model_name: 'builtin__run_command',
    server: 'builtin',
    tool: 'run_command',
    raw_args: '{}',
    args: { command: `echo ${n}` },
    args_hash: `hash_${n}`,
    state: 'pending',
    policy_step: null,
    policy_why: null,
    run_args: null,
    result: null,
    created_at: '2026-11-23T10:00:00Z',
    updated_at: '2026-11-23T10:00:00Z',
    runs_after: 0,
  };
}

const messages: MessageRow[] = [
  { id: 1, session_id: 'ses_demo', role: 'assistant', content: '', created_at: '2026-11-23T10:00:00Z', calls: [call(1), call(2), call(3)] },
];

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return { ...actual, api: { ...actual.api, transcript: async () => messages } };
});

afterEach(() => {
  app.inbox = [];
  app.currentSession = null;
  app.sessions = [];
});

describe('Chat', () => {
  it('shows the "review carefully" warning once per chat, on its first waiting call, not on every card', async () => {
    app.sessions = [
      { id: 'ses_demo', name: 'demo', mode: null, status: 'awaiting_approval', last_error: null, created_at: '', updated_at: '', title: null },
    ];
    app.currentSession = 'demo';
    app.inbox = [1, 2, 3].map((n) => item(n, 'demo', { tool: 'run_command', args: { command: `echo ${n}` } }));
    render(Chat);
    await waitFor(() => expect(screen.getAllByRole('region', { name: 'Permission request' })).toHaveLength(3));
    const warnings = screen.getAllByTestId('prompt-warning');
    expect(warnings).toHaveLength(1);
    expect(screen.getAllByRole('region', { name: 'Permission request' })[0].contains(warnings[0])).toBe(true);
    expect(screen.getAllByText('Review each action carefully before approving.')).toHaveLength(1);
  });
});
