import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { item } from '../test/fixtures';
import { AppState } from './state.svelte';

describe('AppState inbox events', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('does not show an item twice when its event arrives after a fetch that had it', () => {
    const state = new AppState();
    state.inbox = [item(1), item(2)];
    state.apply({ type: 'approval_requested', item: item(2) });
    state.apply({ type: 'approval_requested', item: item(3) });
    state.apply({ type: 'approval_requested', item: item(3) });
    vi.advanceTimersByTime(40);
    expect(state.inbox.map((i) => i.approval_id)).toEqual(['apr_1', 'apr_2', 'apr_3']);
  });

  it('does not bring back an item whose request event comes after its decision', () => {
    const state = new AppState();
    state.inbox = [item(1)];
    state.apply({ type: 'approvals_decided', decisions: [{ approval_id: 'apr_2', session: 'demo', approve: true, status: 'approved', decided_by: 'inbox' }] });
    vi.advanceTimersByTime(40);
    state.apply({ type: 'approval_requested', item: item(2) });
    vi.advanceTimersByTime(40);
    expect(state.inbox.map((i) => i.approval_id)).toEqual(['apr_1']);
  });

  it('keeps the inbox from events when a turn is cancelled: no re-read of the whole inbox', async () => {
    const { mockIPC, clearMocks } = await import('@tauri-apps/api/mocks');
    const commands: string[] = [];
    mockIPC((cmd) => {
      commands.push(cmd);
      return [];
    });
    const state = new AppState();
    state.inbox = [item(1), item(2)];
    state.apply({ type: 'approvals_decided', decisions: [{ approval_id: 'apr_1', session: 'demo', approve: false, status: 'cancelled', decided_by: 'engine' }] });
    state.apply({ type: 'turn_ended', outcome: { session: 'demo', status: 'cancelled', answer: null, error: null } });
    vi.advanceTimersByTime(100);
    expect(state.inbox.map((i) => i.approval_id)).toEqual(['apr_2']);
    expect(commands).not.toContain('inbox');
    clearMocks();
  });

  it('keeps items whose events arrive while the rest of a reload is still on its way', async () => {
    // The window's commands go over the local API: `sessions` may answer long after `inbox`.
    const { mockIPC, clearMocks } = await import('@tauri-apps/api/mocks');
    let answerSessions: (value: unknown) => void = () => {};
    mockIPC((cmd) => {
      if (cmd === 'inbox') return [item(1)];
      if (cmd === 'list_sessions') return new Promise((done) => (answerSessions = done));
      if (cmd === 'paused') return false;
      return null;
    });
    const state = new AppState();
    const reloaded = state.reload();
    await vi.advanceTimersByTimeAsync(0);
    expect(state.inbox.map((i) => i.approval_id)).toEqual(['apr_1']);
    // A request made after the inbox was read arrives before the sessions do.
    state.apply({ type: 'approval_requested', item: item(2) });
    await vi.advanceTimersByTimeAsync(40);
    answerSessions([]);
    await reloaded;
    expect(state.inbox.map((i) => i.approval_id)).toEqual(['apr_1', 'apr_2']);
    clearMocks();
  });

  it('applies an event that arrives while the window is still loading its first inbox', async () => {
    const { mockIPC, clearMocks } = await import('@tauri-apps/api/mocks');
    const { emit } = await import('@tauri-apps/api/event');
    let answerInbox: (value: unknown) => void = () => {};
    mockIPC(
      (cmd) => {
        if (cmd === 'inbox') return new Promise((done) => (answerInbox = done));
        if (cmd === 'list_sessions') return [];
        if (cmd === 'paused') return false;
        return null;
      },
      { shouldMockEvents: true },
    );
    const state = new AppState();
    const started = state.start();
    await vi.advanceTimersByTimeAsync(0);
    // The engine made a request after it read the inbox, before the answer reached the window.
    await emit('engine-event', { type: 'approval_requested', item: item(2) });
    answerInbox([item(1)]);
    await vi.advanceTimersByTimeAsync(100);
    answerInbox([item(1), item(2)]);
    await vi.advanceTimersByTimeAsync(100);
    await started;
    expect(state.inbox.map((i) => i.approval_id).sort()).toEqual(['apr_1', 'apr_2']);
    clearMocks();
  });

  it('shows that decisions can no longer be recorded once the disk refused one', () => {
    const state = new AppState();
    expect(state.storageError).toBeNull();
    state.apply({ type: 'storage_failed', reason: 'disk I/O error' });
    expect(state.storageError).toBe('disk I/O error');
  });

  it('counts server changes, so Settings reads the servers again', () => {
    const state = new AppState();
    state.apply({ type: 'servers_changed', server: 'echo' });
    state.apply({ type: 'servers_changed', server: 'echo' });
    expect(state.serversRevision).toBe(2);
  });

  it("streams a hosted agent's thinking apart from its answer, until the step is kept", () => {
    const state = new AppState();
    state.sessions = [
      { id: 'ses_a', name: 'a', mode: null, status: 'thinking', last_error: null, created_at: '', updated_at: '', title: null },
    ];
    state.apply({ type: 'thought_delta', session: 'a', text: 'The person wants ' });
    state.apply({ type: 'thought_delta', session: 'a', text: 'f.txt.' });
    state.apply({ type: 'text_delta', session: 'a', text: 'Done.' });
    expect(state.liveThought.a).toBe('The person wants f.txt.');
    expect(state.live.a).toBe('Done.');
    state.apply({ type: 'session_status', session: 'a', status: 'running_tools' });
    expect(state.liveThought.a).toBe('');
    state.apply({ type: 'thought_delta', session: 'a', text: 'again' });
    state.apply({ type: 'turn_ended', outcome: { session: 'a', status: 'completed', answer: 'Done.', error: null } });
    expect(state.liveThought.a).toBe('');
  });
});
