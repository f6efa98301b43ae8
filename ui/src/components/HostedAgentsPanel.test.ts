import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { AcpAgentView } from '../lib/bindings/AcpAgentView';
import HostedAgentsPanel from './HostedAgentsPanel.svelte';

afterEach(() => clearMocks());

describe('HostedAgentsPanel', () => {
  it('adds an agent by its command words, lists it, removes it, and shows a refusal', async () => {
    const user = userEvent.setup();
    let hosted: AcpAgentView[] = [];
    const calls: { cmd: string; args: Record<string, unknown> }[] = [];
    mockIPC((cmd, payload) => {
      const args = (payload ?? {}) as Record<string, unknown>;
      calls.push({ cmd, args });
      switch (cmd) {
        case 'acp_agents':
          return hosted;
        case 'save_acp_agent':
          if (args.name === 'claude-code') throw { code: 'invalid', message: "'claude-code' is already the name of an agent" };
          hosted = [{ name: args.name as string, command: args.command as string[] }];
          return null;
        case 'remove_acp_agent':
          hosted = [];
          return true;
        default:
          return null;
      }
    });
    render(HostedAgentsPanel);
    await screen.findByTestId('hosted-none');
    await user.type(screen.getByTestId('hosted-name'), 'gemini');
    await user.type(screen.getByTestId('hosted-command'), '/usr/bin/gemini  --acp');
    await user.click(screen.getByTestId('hosted-add'));
    const row = await screen.findByTestId('hosted-agent');
    expect(row.textContent).toContain('/usr/bin/gemini --acp');
    expect(calls.find((c) => c.cmd === 'save_acp_agent')?.args).toEqual({
      name: 'gemini',
      command: ['/usr/bin/gemini', '--acp'],
    });
    await user.click(screen.getByTestId('hosted-agent-remove'));
    await screen.findByTestId('hosted-none');
    expect(calls.find((c) => c.cmd === 'remove_acp_agent')?.args).toEqual({ name: 'gemini' });

    await user.type(screen.getByTestId('hosted-name'), 'claude-code');
    await user.type(screen.getByTestId('hosted-command'), 'x');
    await user.click(screen.getByTestId('hosted-add'));
    await waitFor(() => expect(screen.getByTestId('hosted-error').textContent).toContain('already the name'));
  });
});
