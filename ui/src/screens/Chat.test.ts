import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallRow } from '../lib/bindings/CallRow';
import type { MessageRow } from '../lib/bindings/MessageRow';
import type { SessionRow } from '../lib/bindings/SessionRow';
import { app } from '../lib/state.svelte';
import { everythingFormSorted, everythingOrder, item } from '../test/fixtures';
import Chat from './Chat.svelte';

const send = vi.fn(async (_session: string, _text: string): Promise<unknown> => undefined);
const answer = vi.fn(async (..._args: unknown[]) => undefined);
const chatWithAgent = vi.fn(async (..._args: unknown[]): Promise<unknown> => undefined);
let transcripts: Record<string, MessageRow[]> = {};

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return {
    ...actual,
    api: {
      ...actual.api,
      transcript: async (name: string) => transcripts[name] ?? [],
      send: (session: string, text: string) => send(session, text),
      sessions: async () => app.sessions,
      answer: (...a: unknown[]) => answer(...a),
      acpAgents: async () => [{ name: 'qwen', command: ['/usr/bin/qwen', '--acp'] }],
      chatWithAgent: (...a: unknown[]) => chatWithAgent(...a),
    },
  };
});

function session(name: string): SessionRow {
  return { id: `ses_${name}`, name, mode: null, status: 'idle', last_error: null, created_at: '2026-11-25T10:00:00Z', updated_at: '2026-11-25T10:00:00Z', title: null };
}

function runningCall(id: string): CallRow {
  return {
    id, session_id: 'ses_a', message_id: 2, position: 0, provider_call_id: 'p1', model_name: 'every__trigger-elicitation-request',
    server: 'every', tool: 'trigger-elicitation-request', raw_args: '{}', args: {}, args_hash: 'h', state: 'running',
    policy_step: null, policy_why: null, run_args: null, result: null, created_at: '2026-11-25T10:00:00Z',
    updated_at: '2026-11-25T10:00:00Z', runs_after: 0,
  };
}

// jsdom lays nothing out: the stream's scroll to its end is a no-op here.
Element.prototype.scrollTo ??= function scrollTo() {};

beforeEach(() => {
  send.mockReset();
  answer.mockClear();
  transcripts = {};
  app.inbox = [];
  app.status = {};
  app.sessions = [session('a'), session('b')];
  app.currentSession = 'a';
});

describe('Chat', () => {
  it('New chat puts the cursor in its name field', async () => {
    const user = userEvent.setup();
    render(Chat);
    await user.click(screen.getByRole('button', { name: 'New chat' }));
    // The button had the focus when the field appeared: the field takes it, so one can type.
    expect(document.activeElement).toBe(screen.getByLabelText('New chat name'));
  });

  it('New chat with a hosted agent: its first message starts the agent in that chat', async () => {
    chatWithAgent.mockClear();
    const user = userEvent.setup();
    render(Chat);
    await user.click(screen.getByRole('button', { name: 'New chat' }));
    await user.selectOptions(await screen.findByLabelText('New chat agent'), 'qwen');
    await user.type(screen.getByLabelText('New chat name'), 'fix{Enter}');
    await user.type(screen.getByLabelText('Message'), 'make the tests pass{Enter}');
    expect(chatWithAgent).toHaveBeenCalledWith('qwen', 'fix', 'make the tests pass');
    expect(send).not.toHaveBeenCalled();
    // Its next message goes the ordinary way: the engine sends it to the chat's agent.
    await user.type(screen.getByLabelText('Message'), 'and the docs{Enter}');
    expect(send).toHaveBeenCalledWith('fix', 'and the docs');
    expect(chatWithAgent).toHaveBeenCalledTimes(1);
  });

  it("says why a busy chat cannot take a message, and the error stays with that chat", async () => {
    send.mockRejectedValueOnce({ code: 'busy', message: "the chat 'a' is waiting for you to decide a request (in the chat or the Inbox); decide, or cancel the turn, then send again" });
    app.status = { a: 'awaiting_approval', b: 'idle' };
    const user = userEvent.setup();
    render(Chat);
    const message = screen.getByLabelText('Message') as HTMLTextAreaElement;
    expect(message.placeholder).toBe('Waiting for your decision on the call above…');
    await user.type(message, 'one more thing{Enter}');
    expect(send).toHaveBeenCalledWith('a', 'one more thing');
    expect(screen.getByRole('alert').textContent).toContain('waiting for you to decide a request');
    // Another chat: its own (empty) state, not a's error.
    await user.click(screen.getByRole('button', { name: /^b/ }));
    expect(screen.queryByRole('alert')).toBeNull();
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).placeholder).toBe('Message');
    // Back in a, its error is still there until a send succeeds.
    await user.click(screen.getByRole('button', { name: /^a/ }));
    expect(screen.getByRole('alert').textContent).toContain('waiting for you to decide');
  });

  it("says a thinking chat's composer waits for the model", () => {
    app.status = { a: 'thinking' };
    render(Chat);
    expect((screen.getByLabelText('Message') as HTMLTextAreaElement).placeholder).toBe('Waiting for the model to answer…');
  });

  it("shows a server's question in the card of the call it waits in, and answers it there", async () => {
    transcripts.a = [
      { id: 1, session_id: 'ses_a', role: 'user', content: 'ask me', created_at: '', calls: [] },
      { id: 2, session_id: 'ses_a', role: 'assistant', content: '', created_at: '', calls: [runningCall('call_9')] },
    ];
    app.status = { a: 'running_tools' };
    app.inbox = [
      item(7, 'a', {
        kind: 'elicitation', server: 'every', tool: 'elicitation', tool_call_id: null, editable: false, input_schema: null,
        message: 'Please provide inputs for the following fields:', schema: everythingFormSorted,
        args: { message: 'Please provide inputs for the following fields:', schema: everythingFormSorted, tool_call_id: 'call_9', property_order: everythingOrder },
      }),
    ];
    const user = userEvent.setup();
    render(Chat);
    const question = await screen.findByTestId('call-question');
    expect(within(question).getByTestId('elicitation-message').textContent).toBe('Please provide inputs for the following fields:');
    expect(within(question).getAllByTestId('elicitation-field').map((f) => f.getAttribute('data-field'))).toEqual(everythingOrder);
    await user.type(within(question).getByLabelText('String *'), 'Ada');
    await user.click(within(question).getByRole('button', { name: 'Accept' }));
    await waitFor(() => expect(answer).toHaveBeenCalledTimes(1));
    const [id, sent] = answer.mock.calls[0] as [string, { action: string; content: Record<string, unknown> }];
    expect(id).toBe('apr_7');
    expect(sent.action).toBe('accept');
    expect(sent.content).toMatchObject({ name: 'Ada', titledMultipleSelectEnum: ['fish-1'], integer: 42 });
    expect(app.inbox).toEqual([]);
  });

  it("a hosted agent's chat: its text, a card per tool call, the prompt on the card that waits, the text as it streams", async () => {
    const card = (id: string, state: CallRow['state'], command: string): CallRow => ({
      ...runningCall(id),
      provider_call_id: id,
      model_name: 'run_shell_command',
      server: 'qwen',
      tool: 'run_shell_command',
      args: { command, description: 'write f.txt' },
      raw_args: JSON.stringify({ command, description: 'write f.txt' }),
      state,
    });
    transcripts.a = [
      { id: 1, session_id: 'ses_a', role: 'user', content: 'Create f.txt', created_at: '', calls: [] },
      { id: 2, session_id: 'ses_a', role: 'assistant', content: 'Let me look first.', created_at: '', calls: [card('call_1', 'succeeded', 'ls')] },
      { id: 3, session_id: 'ses_a', role: 'assistant', content: 'Now I write it.', created_at: '', calls: [card('call_2', 'pending', 'echo hi > f.txt')] },
    ];
    app.status = { a: 'awaiting_approval' };
    app.live = { a: '' };
    app.inbox = [
      item(2, 'a', {
        kind: 'agent_tool_call', server: 'qwen', tool: 'run_shell_command', tool_call_id: 'call_2', editable: false, input_schema: null,
        args: { command: 'echo hi > f.txt', description: 'write f.txt' }, why: 'qwen asks: echo hi > f.txt (execute) — qwen/run_shell_command: approval required',
        agent: 'qwen', agent_session: 's1', cwd: '/work/project',
      }),
    ];
    render(Chat);
    await waitFor(() => expect(screen.getAllByTestId('tool-call')).toHaveLength(2));
    // One assistant message: the agent's texts and its calls in the order it made them.
    const message = screen.getByTestId('assistant-message');
    expect(message.textContent).toContain('Let me look first.');
    expect(message.textContent).toContain('Now I write it.');
    const [ran, waits] = within(message).getAllByTestId('tool-call');
    expect(ran.getAttribute('data-state')).toBe('succeeded');
    expect(within(ran).getByTestId('call-key').textContent).toContain('ls');
    // The waiting call carries the prompt in place, its command shown as a command.
    const prompt = within(waits).getByRole('region', { name: 'Permission request' });
    expect(prompt.textContent).toContain('Allow tool call from qwen?');
    expect(within(prompt).getByTestId('call-command').textContent).toContain('echo hi > f.txt');
    expect(within(prompt).getByTestId('call-intent').textContent).toContain('write f.txt');
    // The agent's next words stream into the same message as they come.
    app.live = { a: 'Writing' };
    await waitFor(() => expect(within(message).getByText('Writing').classList.contains('streaming')).toBe(true));
  });

  it("a hosted agent's thinking: collapsed above its answer, streamed, never shown as the answer or a call", async () => {
    transcripts.a = [
      { id: 1, session_id: 'ses_a', role: 'user', content: 'Create f.txt', created_at: '', calls: [] },
      { id: 2, session_id: 'ses_a', role: 'assistant', content: 'Done.', created_at: '', calls: [], thought: 'The person wants f.txt.' },
    ];
    app.status = { a: 'idle' };
    app.live = { a: '' };
    app.liveThought = { a: '' };
    render(Chat);
    const kept = await screen.findByTestId('agent-thought');
    const message = screen.getByTestId('assistant-message');
    // Above the answer, collapsed, named as thinking; the answer's text is the answer alone.
    expect(kept.tagName).toBe('DETAILS');
    expect((kept as HTMLDetailsElement).open).toBe(false);
    expect(within(kept).getByText('Thought').tagName).toBe('SUMMARY');
    const answer = within(message).getByText('Done.');
    expect(kept.compareDocumentPosition(answer) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(answer.textContent).not.toContain('wants');
    expect(within(message).queryAllByTestId('tool-call')).toHaveLength(0);
    expect(within(kept).getByText('The person wants f.txt.').closest('details')).toBe(kept);
    // The next turn's thinking streams as "Thinking…", apart from the text that streams.
    app.status = { a: 'thinking' };
    app.liveThought = { a: 'Now the docs' };
    app.live = { a: 'Writing' };
    await waitFor(() => expect(screen.getAllByTestId('agent-thought')).toHaveLength(2));
    const streaming = screen.getAllByTestId('agent-thought')[1];
    expect(within(streaming).getByText('Thinking…').tagName).toBe('SUMMARY');
    expect(within(streaming).getByText('Now the docs').classList.contains('streaming')).toBe(true);
    expect(within(message).getByText('Writing').textContent).toBe('Writing');
    // Its "Thinking…" is the only one: no second indicator below.
    expect(screen.getAllByText('Thinking…')).toHaveLength(1);
  });
});
