// Groups a transcript for display: a user message, then everything the assistant did until
// the next user message as one message — text and tool calls in order — so approved calls sit
// in the same message as the rest. A hosted agent's thinking is a part of its own, before the
// text it came before: shown apart (collapsed), never as the answer.
import type { CallRow } from './bindings/CallRow';
import type { MessageRow } from './bindings/MessageRow';

export type Part =
  | { kind: 'text'; key: string; text: string }
  | { kind: 'thought'; key: string; text: string }
  | { kind: 'call'; key: string; call: CallRow };
export type Group =
  | { role: 'user'; key: string; text: string }
  | { role: 'assistant'; key: string; parts: Part[]; last: boolean };

export function groupTurns(messages: readonly MessageRow[]): Group[] {
  const groups: Group[] = [];
  for (const message of messages) {
    if (message.role === 'user') {
      groups.push({ role: 'user', key: `u${message.id}`, text: message.content });
      continue;
    }
    let group = groups[groups.length - 1];
    if (!group || group.role !== 'assistant') {
      group = { role: 'assistant', key: `a${message.id}`, parts: [], last: false };
      groups.push(group);
    }
    if (message.thought?.trim()) group.parts.push({ kind: 'thought', key: `h${message.id}`, text: message.thought });
    if (message.content.trim()) group.parts.push({ kind: 'text', key: `t${message.id}`, text: message.content });
    for (const call of message.calls) group.parts.push({ kind: 'call', key: call.id, call });
  }
  const last = groups[groups.length - 1];
  if (last && last.role === 'assistant') last.last = true;
  return groups;
}

/**
 * What a call's status badge says: its state, "approved — runs after N earlier calls" while a
 * call that may run waits for the earlier calls of its step (they run in the model's order),
 * and a failed command's exit code.
 */
export function callStatus(call: CallRow): string {
  const state = call.state.replace('_', ' ');
  if (call.runs_after > 0 && ['approved', 'auto_allowed', 'running'].includes(call.state)) {
    return `approved — runs after ${call.runs_after} earlier call${call.runs_after === 1 ? '' : 's'}`;
  }
  const result = call.result as Record<string, unknown> | null;
  if (call.state === 'failed' && result && typeof result === 'object' && typeof result.exit_code === 'number') {
    return `failed · exit ${result.exit_code}`;
  }
  return state;
}
