import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentStatus } from '../lib/bindings/AgentStatus';
import AgentsPanel from './AgentsPanel.svelte';

function agents(connected: boolean): AgentStatus[] {
  return [
    {
      connection: { agent: 'claude-code', connected, path: '/home/me/.claude/settings.json' },
      view: {
        name: 'claude-code', fallback: 'ask', last_request_at: '2026-11-23T10:00:00Z', last_tool: 'Bash',
        last_cwd: '/home/me/project', last_outcome: 'allowed', token_issued_at: null,
      },
    },
    {
      connection: { agent: 'codex', connected: false, path: '/home/me/.codex/hooks.json' },
      view: { name: 'codex', fallback: 'deny', last_request_at: null, last_tool: null, last_cwd: null, last_outcome: null, token_issued_at: null },
    },
  ];
}

afterEach(() => clearMocks());

describe('AgentsPanel', () => {
  it('lists the agents, connects one and shows what changed, and sets a fallback', async () => {
    const user = userEvent.setup();
    const calls: { cmd: string; args: Record<string, unknown> }[] = [];
    let connected = false;
    mockIPC((cmd, payload) => {
      const args = (payload ?? {}) as Record<string, unknown>;
      calls.push({ cmd, args });
      switch (cmd) {
        case 'agents':
          return agents(connected);
        case 'connect_agent':
          connected = true;
          return {
            agent: args.agent, path: '/home/me/.claude/settings.json', changed: true,
            backup: '/home/me/.claude/settings.json.airlock-backup',
            changes: ['+ PreToolUse hook (every tool): exec /usr/bin/airlock hook claude-code --timeout 600'],
          };
        default:
          return null;
      }
    });
    render(AgentsPanel);
    const claude = await screen.findByText('Claude Code');
    const row = claude.closest('[data-testid=agent]') as HTMLElement;
    expect(within(row).getByTestId('agent-state').textContent).toBe('Not connected');
    expect(within(row).getByTestId('agent-last').textContent).toContain('Bash');
    await user.click(within(row).getByTestId('agent-connect'));
    await waitFor(() => expect(within(row).getByTestId('agent-state').textContent).toBe('Connected'));
    expect(calls.find((c) => c.cmd === 'connect_agent')?.args).toEqual({ agent: 'claude-code' });
    expect(screen.getByTestId('agent-report').textContent).toContain('PreToolUse hook');
    expect(screen.getByTestId('agent-report').textContent).toContain('airlock-backup');

    const codex = screen.getByText('Codex').closest('[data-testid=agent]') as HTMLElement;
    expect(within(codex).getByTestId('agent-last').textContent).toContain('No requests yet');
    await user.selectOptions(within(codex).getByTestId('agent-fallback'), 'ask');
    await waitFor(() =>
      expect(calls.find((c) => c.cmd === 'set_agent_fallback')?.args).toEqual({ agent: 'codex', fallback: 'ask' }),
    );
  });

  it('lists the programs that ask through the approval clients by their names', async () => {
    mockIPC((cmd) => {
      if (cmd === 'agents') return agents(false);
      if (cmd === 'agent_views') {
        return [
          agents(false)[0].view,
          { name: 'mcp-client', fallback: 'deny', last_request_at: null, last_tool: null, last_cwd: null, last_outcome: null, token_issued_at: null },
          {
            name: 'my-pydantic-app', fallback: 'deny', last_request_at: '2026-11-26T05:00:00Z', last_tool: 'delete_file',
            last_cwd: null, last_outcome: 'pending', token_issued_at: null,
          },
        ];
      }
      return null;
    });
    render(AgentsPanel);
    const program = await screen.findByText('my-pydantic-app');
    const row = program.closest('[data-testid=program]') as HTMLElement;
    expect(within(row).getByTestId('program-last').textContent).toContain('delete_file');
    expect(screen.getAllByTestId('program')).toHaveLength(1);
  });

  it("shows each program's own token, issues one (shown once), revokes it, and adds a program", async () => {
    const user = userEvent.setup();
    const calls: { cmd: string; args: Record<string, unknown> }[] = [];
    const tokens = new Map<string, string>([['ledger-app', '2026-11-26T07:00:00Z']]);
    const view = (name: string, lastTool: string | null) => ({
      name, fallback: 'deny', last_request_at: lastTool ? '2026-11-26T08:00:00Z' : null, last_tool: lastTool,
      last_cwd: null, last_outcome: lastTool ? 'allow' : null, token_issued_at: tokens.get(name) ?? null,
    });
    mockIPC((cmd, payload) => {
      const args = (payload ?? {}) as Record<string, unknown>;
      calls.push({ cmd, args });
      switch (cmd) {
        case 'agents':
          return agents(false);
        case 'agent_views':
          return [...new Set(['ledger-app', 'my-bot', ...tokens.keys()])].map((name) =>
            view(name, name === 'ledger-app' ? 'delete_file' : null),
          );
        case 'issue_agent_token':
          tokens.set(String(args.agent), '2026-11-26T09:00:00Z');
          return { agent: args.agent, token: `airlock_agent_for_${args.agent}`, hook_url: null };
        case 'revoke_agent_token':
          return tokens.delete(String(args.agent));
        default:
          return null;
      }
    });
    render(AgentsPanel);
    const row = (name: string) =>
      screen.getAllByTestId('program').find((r) => r.dataset.name === name) as HTMLElement;
    await screen.findByText('ledger-app');
    expect(within(row('ledger-app')).getByTestId('program-token').textContent).toContain('Own token since 2026-11-26 07:00:00');
    expect(within(row('my-bot')).getByTestId('program-token').textContent).toContain('No token of its own');
    expect(within(row('my-bot')).queryByTestId('program-revoke')).toBeNull();

    await user.click(within(row('my-bot')).getByTestId('program-issue'));
    await waitFor(() => expect(within(row('my-bot')).getByTestId('program-token').textContent).toContain('Own token since'));
    expect(calls.find((c) => c.cmd === 'issue_agent_token')?.args).toEqual({ agent: 'my-bot' });
    expect(screen.getByTestId('program-new-token').textContent).toContain('airlock_agent_for_my-bot');
    expect(screen.getByTestId('program-new-token').textContent).toContain('AIRLOCK_TOKEN');

    await user.click(within(row('ledger-app')).getByTestId('program-revoke'));
    await waitFor(() => expect(within(row('ledger-app')).getByTestId('program-token').textContent).toContain('No token of its own'));
    expect(calls.find((c) => c.cmd === 'revoke_agent_token')?.args).toEqual({ agent: 'ledger-app' });

    await user.type(screen.getByTestId('program-name'), 'new-agent');
    await user.click(screen.getByTestId('program-add'));
    await waitFor(() => expect(row('new-agent')).toBeTruthy());
    expect(within(row('new-agent')).getByTestId('program-token').textContent).toContain('Own token since');
    expect(screen.getByTestId('program-new-token').textContent).toContain('airlock_agent_for_new-agent');
  });

  it('shows a refusal as it is', async () => {
    const user = userEvent.setup();
    mockIPC((cmd) => {
      if (cmd === 'agents') return agents(false);
      if (cmd === 'connect_agent') throw { code: 'invalid', message: 'the `airlock` command-line tool is not beside this app' };
      return null;
    });
    render(AgentsPanel);
    const row = (await screen.findByText('Claude Code')).closest('[data-testid=agent]') as HTMLElement;
    await user.click(within(row).getByTestId('agent-connect'));
    expect((await screen.findByTestId('agent-error')).textContent).toContain('not beside this app');
  });

  it('connects Claude Desktop through the MCP proxy, with no fallback to choose', async () => {
    const user = userEvent.setup();
    let connected = false;
    mockIPC((cmd, payload) => {
      const args = (payload ?? {}) as Record<string, unknown>;
      if (cmd === 'agents') {
        return [
          {
            connection: { agent: 'claude-desktop', connected, path: '/home/me/.config/Claude/claude_desktop_config.json' },
            view: {
              name: 'mcp-client', fallback: 'deny', last_request_at: '2026-11-24T09:00:00Z', last_tool: 'echo',
              last_cwd: null, last_outcome: 'allow', token_issued_at: null,
            },
          },
        ];
      }
      if (cmd === 'connect_agent') {
        connected = true;
        return {
          agent: args.agent, path: '/home/me/.config/Claude/claude_desktop_config.json', changed: true, backup: null,
          changes: ['~ files: npx now runs through airlock mcp-proxy'],
        };
      }
      return null;
    });
    render(AgentsPanel);
    const row = (await screen.findByText('Claude Desktop')).closest('[data-testid=agent]') as HTMLElement;
    expect(within(row).queryByTestId('agent-fallback')).toBeNull();
    expect(within(row).getByTestId('agent-fallback-fixed').textContent).toContain('denied');
    expect(within(row).getByTestId('agent-last').textContent).toContain('echo');
    await user.click(within(row).getByTestId('agent-connect'));
    expect((await screen.findByTestId('agent-report')).textContent).toContain('mcp-proxy');
    expect(screen.getByTestId('agent-restart').textContent).toContain('Restart Claude Desktop');
  });
});
