import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { MemberView } from '../lib/bindings/MemberView';
import type { TeamInboxView } from '../lib/bindings/TeamInboxView';
import { item } from '../test/fixtures';
import TeamInbox from './TeamInbox.svelte';
import TeamServerPanel from './TeamServerPanel.svelte';

type Call = { cmd: string; args: Record<string, unknown> };

const URL = 'https://team.example.com:8443';

/** The team server's members as `team_server_members` reads them. */
const MEMBERS: MemberView[] = [
  { id: 'm1', name: 'ana', role: 'approver', groups: ['release'], created_at: '' },
  { id: 'm2', name: 'ben', role: 'admin', groups: [], created_at: '' },
  { id: 'm3', name: 'vic', role: 'viewer', groups: ['release'], created_at: '' },
];

/** Mocks the resident's team commands over `state`; every call is recorded. */
function resident(state: { view: TeamInboxView | null; refuse?: string; refuseDelegation?: string }): Call[] {
  const calls: Call[] = [];
  mockIPC((cmd, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    switch (cmd) {
      case 'team_inbox':
        return state.view;
      case 'set_team_server':
        if (state.refuse) throw { code: 'not_allowed', message: state.refuse };
        state.view = { url: args.url as string, items: [], error: null };
        return state.view;
      case 'forget_team_server':
        state.view = null;
        return true;
      case 'team_decide':
        if (state.view) state.view = { ...state.view, items: [] };
        return [{ approval_id: 'req-1', error: null }];
      case 'team_server_members':
        return MEMBERS;
      case 'team_delegate':
        if (state.refuseDelegation) throw { code: 'not_allowed', message: state.refuseDelegation };
        if (state.view) state.view = { ...state.view, items: state.view.items.filter((i) => i.approval_id !== args.approvalId) };
        return null;
      default:
        return null;
    }
  });
  return calls;
}

afterEach(() => clearMocks());

describe('TeamServerPanel', () => {
  it('connects with the server, the token and its certificate, then disconnects', async () => {
    const user = userEvent.setup();
    const calls = resident({ view: null });
    render(TeamServerPanel);
    expect((await screen.findByText(/kept in the/)).textContent).toContain('OS keyring');
    await user.type(screen.getByTestId('team-server-url'), URL);
    await user.type(screen.getByTestId('team-token'), 'a'.repeat(64));
    await user.type(screen.getByTestId('team-certificate'), '-----BEGIN CERTIFICATE-----');
    expect((screen.getByTestId('team-token') as HTMLInputElement).type).toBe('password');
    await user.click(screen.getByTestId('team-connect'));
    await waitFor(() =>
      expect(calls.find((c) => c.cmd === 'set_team_server')?.args).toEqual({
        url: URL,
        token: 'a'.repeat(64),
        certificate: '-----BEGIN CERTIFICATE-----',
      }),
    );
    expect((await screen.findByTestId('team-url')).textContent).toContain(URL);
    expect(screen.getByTestId('team-waiting').textContent).toContain('0 waiting');
    await user.click(screen.getByTestId('team-forget'));
    await waitFor(() => expect(calls.some((c) => c.cmd === 'forget_team_server')).toBe(true));
    await screen.findByTestId('team-connect');
  });

  it('shows the server’s refusal of the token as it is, and keeps the form', async () => {
    const user = userEvent.setup();
    resident({ view: null, refuse: `the team server ${URL}: refused: missing or wrong bearer token` });
    render(TeamServerPanel);
    await user.type(await screen.findByTestId('team-server-url'), URL);
    await user.type(screen.getByTestId('team-token'), 'wrong');
    await user.click(screen.getByTestId('team-connect'));
    expect((await screen.findByTestId('team-error')).textContent).toContain('wrong bearer token');
    expect(screen.getByTestId('team-connect')).toBeTruthy();
  });

  it('asks for both the address and the token before sending anything', async () => {
    const user = userEvent.setup();
    const calls = resident({ view: null });
    render(TeamServerPanel);
    await user.type(await screen.findByTestId('team-server-url'), URL);
    await user.click(screen.getByTestId('team-connect'));
    expect((await screen.findByTestId('team-error')).textContent).toContain('member token');
    expect(calls.some((c) => c.cmd === 'set_team_server')).toBe(false);
  });
});

describe('TeamInbox', () => {
  it('shows nothing without a team server', async () => {
    const calls = resident({ view: null });
    render(TeamInbox);
    await waitFor(() => expect(calls.some((c) => c.cmd === 'team_inbox')).toBe(true));
    expect(screen.queryByTestId('team-inbox')).toBeNull();
  });

  it('lists the items waiting on the team server, marked with it, and decides one there', async () => {
    const user = userEvent.setup();
    const waiting = item(1, 'remote', { approval_id: 'req-1', server: 'claude-code', tool: 'Bash', args: { command: 'make deploy' } });
    const calls = resident({ view: { url: URL, items: [waiting], error: null } });
    render(TeamInbox);
    const row = await screen.findByTestId('team-item');
    expect(screen.getByTestId('team-inbox').textContent).toContain(URL);
    expect(row.textContent).toContain('claude-code');
    expect(row.textContent).toContain('make deploy');
    await user.click(screen.getByTestId('team-approve'));
    await waitFor(() => expect(calls.find((c) => c.cmd === 'team_decide')).toBeTruthy());
    const sent = calls.find((c) => c.cmd === 'team_decide')?.args.decisions as { approval_id: string; args_hash: string; decision: { kind: string } }[];
    expect(sent).toHaveLength(1);
    expect(sent[0].approval_id).toBe('req-1');
    expect(sent[0].args_hash).toBe(waiting.args_hash);
    expect(sent[0].decision.kind).toBe('approve');
    expect(calls.some((c) => c.cmd === 'decide')).toBe(false);
    await waitFor(() => expect(screen.queryByTestId('team-item')).toBeNull());
  });

  /** The decisions sent by the last `team_decide`. */
  function sentDecision(calls: Call[]) {
    const sent = calls.filter((c) => c.cmd === 'team_decide').at(-1)?.args.decisions as { approval_id: string; args_hash: string; decision: Record<string, unknown> }[];
    expect(sent).toHaveLength(1);
    return sent[0];
  }

  it('offers what each item offers: an edit only where offered, a form answered, never approved', async () => {
    const editable = item(1, 'remote', { approval_id: 'req-1', server: 'claude-code', tool: 'Bash', args: { command: 'make deploy' } });
    const fixed = item(2, 'remote', { approval_id: 'req-2', available_decisions: ['approve', 'deny'], editable: false });
    const form = item(3, 'remote', {
      approval_id: 'req-3',
      kind: 'elicitation',
      message: 'Which branch?',
      schema: { type: 'object', properties: { branch: { type: 'string' } } },
      available_decisions: ['accept', 'decline', 'cancel'],
    });
    resident({ view: { url: URL, items: [editable, fixed, form], error: null } });
    render(TeamInbox);
    const rows = await screen.findAllByTestId('team-item');
    expect(rows).toHaveLength(3);
    const [first, second, third] = rows.map((row) => within(row));
    expect(first.getByTestId('team-edit')).toBeTruthy();
    expect(first.getByTestId('team-approve')).toBeTruthy();
    expect(second.queryByTestId('team-edit')).toBeNull();
    expect(second.getByTestId('team-deny')).toBeTruthy();
    expect(third.queryByTestId('team-approve')).toBeNull();
    expect(third.queryByTestId('team-deny')).toBeNull();
    expect(third.getByTestId('team-answer')).toBeTruthy();
    for (const row of [first, second, third]) expect(row.getByTestId('delegate').textContent).toBe('Ask someone else…');
  });

  it('denies on the team server with the reason the model reads', async () => {
    const user = userEvent.setup();
    const waiting = item(1, 'remote', { approval_id: 'req-1', server: 'claude-code', tool: 'Bash', args: { command: 'make deploy' } });
    const calls = resident({ view: { url: URL, items: [waiting], error: null } });
    render(TeamInbox);
    await user.click(await screen.findByTestId('team-deny'));
    await user.type(screen.getByTestId('team-deny-reason'), 'not before the release');
    await user.click(screen.getByTestId('team-deny-send'));
    await waitFor(() => expect(calls.some((c) => c.cmd === 'team_decide')).toBe(true));
    const sent = sentDecision(calls);
    expect(sent.approval_id).toBe('req-1');
    expect(sent.args_hash).toBe(waiting.args_hash);
    expect(sent.decision).toMatchObject({ kind: 'deny', reason: 'not before the release' });
    expect(calls.some((c) => c.cmd === 'decide')).toBe(false);
  });

  it('approves edited arguments on the team server', async () => {
    const user = userEvent.setup();
    const waiting = item(1, 'remote', { approval_id: 'req-1' });
    const calls = resident({ view: { url: URL, items: [waiting], error: null } });
    render(TeamInbox);
    await user.click(await screen.findByTestId('team-edit'));
    const form = screen.getByTestId('team-edit-form');
    const editor = within(form).getByLabelText('Arguments (JSON)');
    await user.clear(editor);
    await user.type(editor, '{{"path": "safe.txt", "content": "hi"}');
    await user.click(within(form).getByTestId('team-approve-edited'));
    await waitFor(() => expect(calls.some((c) => c.cmd === 'team_decide')).toBe(true));
    expect(sentDecision(calls).decision).toMatchObject({ kind: 'approve', args: { path: 'safe.txt', content: 'hi' } });
  });

  it('answers a form on the team server', async () => {
    const user = userEvent.setup();
    const form = item(3, 'remote', {
      approval_id: 'req-3',
      kind: 'elicitation',
      message: 'Which branch?',
      schema: { type: 'object', properties: { branch: { type: 'string' } } },
      available_decisions: ['accept', 'decline', 'cancel'],
    });
    const calls = resident({ view: { url: URL, items: [form], error: null } });
    render(TeamInbox);
    await user.click(await screen.findByTestId('team-answer'));
    await user.click(screen.getByRole('button', { name: 'Decline' }));
    await waitFor(() => expect(calls.some((c) => c.cmd === 'team_decide')).toBe(true));
    expect(sentDecision(calls).decision).toEqual({ kind: 'answer', action: 'decline', content: null });
  });

  it('asks someone else on the team server: a member who can decide, with a note', async () => {
    const user = userEvent.setup();
    const waiting = item(1, 'remote', { approval_id: 'req-1', server: 'claude-code', tool: 'Bash', args: { command: 'make deploy' } });
    const calls = resident({ view: { url: URL, items: [waiting], error: null } });
    render(TeamInbox);
    await user.click(await screen.findByTestId('delegate'));
    const to = (await screen.findByTestId('delegate-to')) as HTMLSelectElement;
    // A viewer cannot decide: not offered.
    expect(Array.from(to.options).map((o) => o.value)).toEqual(['ana', 'ben']);
    expect(to.textContent).toContain('ana (approver · release)');
    await user.selectOptions(to, 'ben');
    await user.type(screen.getByTestId('delegate-note'), 'you ran the last deploy');
    await user.click(screen.getByTestId('delegate-send'));
    await waitFor(() => expect(calls.some((c) => c.cmd === 'team_delegate')).toBe(true));
    expect(calls.find((c) => c.cmd === 'team_delegate')?.args).toEqual({ approvalId: 'req-1', to: 'ben', note: 'you ran the last deploy' });
    expect(calls.some((c) => c.cmd === 'team_decide' || c.cmd === 'delegate')).toBe(false);
    await waitFor(() => expect(screen.queryByTestId('team-item')).toBeNull());
  });

  it('shows the server’s refusal to hand an item on, and keeps the item', async () => {
    const user = userEvent.setup();
    const waiting = item(1, 'remote', { approval_id: 'req-1' });
    resident({ view: { url: URL, items: [waiting], error: null }, refuseDelegation: 'req-1 is routed to group:release, not to you' });
    render(TeamInbox);
    await user.click(await screen.findByTestId('delegate'));
    await user.click(await screen.findByTestId('delegate-send'));
    expect((await screen.findByTestId('delegate-error')).textContent).toContain('not to you');
    expect(screen.getByTestId('team-item')).toBeTruthy();
    expect(screen.getByTestId('delegate-form')).toBeTruthy();
  });
});
