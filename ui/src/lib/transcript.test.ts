import { describe, expect, it } from 'vitest';
import type { CallRow } from './bindings/CallRow';
import type { MessageRow } from './bindings/MessageRow';
import { groupTurns } from './transcript';

function call(id: string, message_id: number): CallRow {
  return {
    id,
    session_id: 's',
    message_id,
    position: 0,
    provider_call_id: id,
    model_name: 'builtin__write_file',
    server: 'builtin',
    tool: 'write_file',
    raw_args: '{}',
    args: {},
    args_hash: 'h',
    state: 'succeeded',
    policy_step: null,
    policy_why: null,
    run_args: null,
    result: 'ok',
    created_at: '',
    updated_at: '',
    runs_after: 0,
  } as CallRow;
}

function message(id: number, role: string, content: string, calls: CallRow[] = []): MessageRow {
  return { id, session_id: 's', role, content, created_at: '', calls } as MessageRow;
}

describe('groupTurns', () => {
  it('shows every step of a turn as one assistant message: text and calls in order', () => {
    const groups = groupTurns([
      message(1, 'user', 'write it'),
      message(2, 'assistant', 'I will write it.', [call('c1', 2)]),
      message(3, 'assistant', 'Done.'),
      message(4, 'user', 'thanks'),
    ]);
    expect(groups.map((g) => g.role)).toEqual(['user', 'assistant', 'user']);
    const assistant = groups[1];
    if (assistant.role !== 'assistant') throw new Error('expected the assistant');
    expect(assistant.parts.map((p) => (p.kind === 'call' ? p.call.id : p.text))).toEqual(['I will write it.', 'c1', 'Done.']);
    expect(assistant.last).toBe(false);
  });

  it("puts a hosted agent's thinking before the text it came before, as a part of its own", () => {
    const thought = { ...message(2, 'assistant', 'Done.'), thought: 'The person wants f.txt.' };
    const groups = groupTurns([message(1, 'user', 'write it'), thought, { ...message(3, 'assistant', ''), thought: '  ' }]);
    const assistant = groups[1];
    if (assistant.role !== 'assistant') throw new Error('expected the assistant');
    expect(assistant.parts).toEqual([
      { kind: 'thought', key: 'h2', text: 'The person wants f.txt.' },
      { kind: 'text', key: 't2', text: 'Done.' },
    ]);
  });

  it('marks the last assistant message, where streamed text goes', () => {
    const groups = groupTurns([message(1, 'user', 'hi'), message(2, 'assistant', '', [call('c1', 2)])]);
    expect(groups[1]).toMatchObject({ role: 'assistant', last: true, parts: [{ kind: 'call' }] });
  });
});
