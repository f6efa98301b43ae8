import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { GrantOffer } from '../lib/bindings/GrantOffer';
import { item } from '../test/fixtures';
import GrantChoices from './GrantChoices.svelte';

const grantOffer = vi.fn(async (_id: string): Promise<GrantOffer> => ({ label: 'anything under notes/', runs_commands: false, session: 'demo' }));

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return { ...actual, api: { ...actual.api, grantOffer: (id: string) => grantOffer(id) } };
});

const command = item(1, 'demo', { tool: 'run_command', args: { command: 'git status' } });

describe('GrantChoices', () => {
  beforeEach(() => grantOffer.mockClear());

  it('covers this chat and arguments like these unless widened, and says what they are', async () => {
    const ongrant = vi.fn();
    render(GrantChoices, { item: item(1), ongrant });
    expect(await screen.findByText(': anything under notes/')).toBeTruthy();
    expect(grantOffer).toHaveBeenCalledWith('apr_1');
    expect((screen.getByRole('radio', { name: 'This chat only' }) as HTMLInputElement).checked).toBe(true);
    expect((screen.getByRole('radio', { name: /Arguments like these/ }) as HTMLInputElement).checked).toBe(true);
    await userEvent.click(screen.getByRole('button', { name: 'for 15 min' }));
    expect(ongrant).toHaveBeenLastCalledWith({ for_secs: 900, scope: 'chat', args: 'suggested' });
    // Widened in the same control: every chat, any arguments (not a command tool: no confirmation).
    await userEvent.click(screen.getByRole('radio', { name: 'Every chat' }));
    await userEvent.click(screen.getByRole('radio', { name: 'Any arguments' }));
    expect(screen.queryByRole('checkbox')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'for the next' }));
    expect(ongrant).toHaveBeenLastCalledWith({ times: 2, scope: 'all', args: 'any' });
  });

  it('grants any arguments of a command tool only after an explicit confirmation', async () => {
    grantOffer.mockResolvedValueOnce({ label: 'commands starting `git status`', runs_commands: true, session: 'demo' });
    const ongrant = vi.fn();
    render(GrantChoices, { item: command, ongrant });
    expect(await screen.findByText(': commands starting `git status`')).toBeTruthy();
    await userEvent.click(screen.getByRole('radio', { name: 'Any arguments' }));
    const confirm = screen.getByRole('checkbox', { name: 'Allow any command of run_command without asking' });
    for (const name of ['for 15 min', 'for 1 hour', 'for the next']) {
      expect((screen.getByRole('button', { name }) as HTMLButtonElement).disabled, name).toBe(true);
    }
    await userEvent.click(screen.getByRole('button', { name: 'for 1 hour' }));
    expect(ongrant).not.toHaveBeenCalled();
    await userEvent.click(confirm);
    await userEvent.click(screen.getByRole('button', { name: 'for 1 hour' }));
    expect(ongrant).toHaveBeenLastCalledWith({ for_secs: 3600, scope: 'chat', args: 'any' });
    // Back to arguments like these and again to any: confirmed anew.
    await userEvent.click(screen.getByRole('radio', { name: /Arguments like these/ }));
    await userEvent.click(screen.getByRole('radio', { name: 'Any arguments' }));
    expect((screen.getByRole('checkbox') as HTMLInputElement).checked).toBe(false);
    expect((screen.getByRole('button', { name: 'for 15 min' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('asks for the confirmation when it cannot tell whether the tool runs commands', async () => {
    grantOffer.mockRejectedValueOnce(new Error('gone'));
    const ongrant = vi.fn();
    render(GrantChoices, { item: command, ongrant });
    await userEvent.click(screen.getByRole('radio', { name: 'Any arguments' }));
    expect(screen.getByRole('checkbox')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'for 15 min' }) as HTMLButtonElement).disabled).toBe(true);
  });
});
