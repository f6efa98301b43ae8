import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { RLO, disguisedCommand, item } from '../test/fixtures';
import PermissionPrompt from './PermissionPrompt.svelte';

describe('PermissionPrompt', () => {
  it('shows the words of the prompt, the call by what it does, and its JSON folded', async () => {
    render(PermissionPrompt, { item: item(1), ondecide: vi.fn() });
    expect(screen.getByRole('heading').textContent).toBe('Allow tool call from builtin?');
    expect(screen.getByText(/^Run/).textContent?.replace(/\s+/g, ' ')).toBe('Run write_file from builtin');
    expect(screen.getByTestId('call-path').textContent).toBe('file1.txt');
    const disclosure = screen.getByRole('button', { name: /Arguments as JSON/ });
    expect(disclosure.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByTestId('prompt-args')).toBeNull();
    expect(screen.getByText(/could potentially trick Airlock into attempting harmful actions/)).toBeTruthy();
    expect(screen.getByText('Review each action carefully before approving.').tagName).toBe('STRONG');
    await userEvent.click(disclosure);
    expect(screen.getByTestId('prompt-args').textContent).toContain('"path": "file1.txt"');
  });

  it("offers only the item's decisions: a provider's own tool is allowed once or denied, nothing kept", () => {
    render(PermissionPrompt, { item: item(1, 'demo', { kind: 'provider_tool_call', available_decisions: ['approve', 'deny'] }), ondecide: vi.fn() });
    const buttons = screen.getAllByRole('button').map((b) => b.textContent?.trim());
    expect(buttons.slice(1)).toEqual(['Allow once', 'Deny']);
    expect(screen.queryByTestId('prompt-more')).toBeNull();
  });

  it('offers Allow for this chat, Allow once and Deny, in that order', async () => {
    const ondecide = vi.fn();
    render(PermissionPrompt, { item: item(1), ondecide });
    const buttons = screen.getAllByRole('button').map((b) => b.textContent?.trim());
    expect(buttons.slice(1)).toEqual(['Allow for this chat', 'Allow once', 'Deny', 'Allow for a while…']);
    await userEvent.click(screen.getByRole('button', { name: 'Allow for this chat' }));
    expect(ondecide).toHaveBeenLastCalledWith({ approve: true, forChat: true, reason: null });
    await userEvent.click(screen.getByRole('button', { name: 'Allow once' }));
    expect(ondecide).toHaveBeenLastCalledWith({ approve: true, forChat: false, reason: null });
  });

  it('grants for a while or for the next N calls only on request', async () => {
    const ondecide = vi.fn();
    render(PermissionPrompt, { item: item(1), ondecide });
    expect(screen.queryByTestId('grant-times')).toBeNull();
    await userEvent.click(screen.getByTestId('prompt-more'));
    await userEvent.click(screen.getByRole('button', { name: 'for 15 min' }));
    expect(ondecide).toHaveBeenLastCalledWith({ approve: true, forChat: false, reason: null, grant: { for_secs: 900, scope: 'chat', args: 'suggested' } });
    await userEvent.click(screen.getByRole('button', { name: 'for 1 hour' }));
    expect(ondecide).toHaveBeenLastCalledWith({ approve: true, forChat: false, reason: null, grant: { for_secs: 3600, scope: 'chat', args: 'suggested' } });
    // "for the next 2 calls": this one and one more.
    await userEvent.click(screen.getByTestId('grant-times'));
    expect(ondecide).toHaveBeenLastCalledWith({ approve: true, forChat: false, reason: null, grant: { times: 2, scope: 'chat', args: 'suggested' } });
    const count = screen.getByTestId('grant-times-count');
    await userEvent.clear(count);
    await userEvent.type(count, '5');
    await userEvent.click(screen.getByTestId('grant-times'));
    expect(ondecide).toHaveBeenLastCalledWith({ approve: true, forChat: false, reason: null, grant: { times: 5, scope: 'chat', args: 'suggested' } });
  });

  it('asks for an optional reason before denying', async () => {
    const ondecide = vi.fn();
    render(PermissionPrompt, { item: item(1), ondecide });
    await userEvent.click(screen.getByRole('button', { name: 'Deny' }));
    expect(ondecide).not.toHaveBeenCalled();
    await userEvent.type(screen.getByLabelText('Reason'), 'use notes.txt instead');
    await userEvent.click(screen.getByRole('button', { name: 'Deny' }));
    expect(ondecide).toHaveBeenCalledWith({ approve: false, forChat: false, reason: 'use notes.txt instead' });
  });

  it('shows a bidi override in the arguments and names as a visible escape, never raw', async () => {
    render(PermissionPrompt, {
      item: item(1, 'demo', { server: `evil${RLO}`, tool: 'shell', args: { command: disguisedCommand } }),
      ondecide: vi.fn(),
    });
    expect(screen.getByRole('heading').textContent).toBe('Allow tool call from evil\\u{202E}?');
    await userEvent.click(screen.getByRole('button', { name: /Arguments as JSON/ }));
    const args = screen.getByTestId('prompt-args');
    expect(args.textContent).not.toContain(RLO);
    expect(args.textContent).toContain('"command": "rm -rf ~ #\\u{202E}txt.cod"');
    const mark = args.querySelector('mark');
    expect(mark?.textContent).toBe('\\u{202E}');
    expect(mark?.getAttribute('title')).toBe('hidden character U+202E (RIGHT-TO-LEFT OVERRIDE)');
    expect(document.body.textContent).not.toContain(RLO);
  });

  it("asks the engine for the file a write replaces, and its buttons stay put when the diff arrives", async () => {
    let answer!: (value: unknown) => void;
    const asked: unknown[] = [];
    mockIPC((cmd, args) => {
      if (cmd !== 'file_on_disk') return null;
      asked.push(args);
      return new Promise((resolve) => (answer = resolve));
    });
    try {
      render(PermissionPrompt, { item: item(1, 'demo', { args: { path: 'notes.md', content: 'a\nc\n' } }), ondecide: vi.fn() });
      await waitFor(() => expect(asked).toEqual([{ approvalId: 'apr_1' }]));
      const allowOnce = screen.getByRole('button', { name: 'Allow once' });
      const box = screen.getByTestId('write-box');
      // The box sits above the buttons and keeps its reserved height: nothing it shows moves them.
      expect(box.compareDocumentPosition(allowOnce) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
      expect(box.classList.contains('reserved')).toBe(true);
      answer({ state: 'text', path: 'notes.md', content: 'a\nb\n' });
      await waitFor(() => expect(within(box).getByTestId('write-diff')).toBeTruthy());
      expect(screen.getByTestId('write-box')).toBe(box);
      expect(box.classList.contains('reserved')).toBe(true);
      expect(screen.getByRole('button', { name: 'Allow once' })).toBe(allowOnce);
    } finally {
      clearMocks();
    }
  });

  it('asks nothing of the disk for a call that writes no whole file', async () => {
    const asked: string[] = [];
    mockIPC((cmd) => {
      asked.push(cmd);
      return null;
    });
    try {
      render(PermissionPrompt, { item: item(1, 'demo', { tool: 'run_command', args: { command: 'ls' } }), ondecide: vi.fn() });
      expect(screen.getByTestId('call-command').textContent).toBe('$ ls');
      expect(screen.queryByTestId('write-box')).toBeNull();
      expect(asked).toEqual([]);
    } finally {
      clearMocks();
    }
  });
});
