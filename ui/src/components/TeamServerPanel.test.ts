import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { TeamInboxView } from '../lib/bindings/TeamInboxView';
import { item } from '../test/fixtures';
import TeamInbox from './TeamInbox.svelte';
import TeamServerPanel from './TeamServerPanel.svelte';

type Call = { cmd: string; args: Record<string, unknown> };

const URL = 'https://team.example.com:8443';

/** Mocks the resident's team commands over `state`; every call is recorded. */
function resident(state: { view: TeamInboxView | null; refuse?: string }): Call[] {
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
});
