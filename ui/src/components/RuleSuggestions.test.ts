import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { RuleSuggestion } from '../lib/bindings/RuleSuggestion';
import type { DecisionRequest } from '../lib/bindings/DecisionRequest';
import { flat, item } from '../test/fixtures';
import RuleSuggestions from './RuleSuggestions.svelte';

const folder: RuleSuggestion = {
  server: 'builtin',
  tool: 'write_file',
  pointer: '/path',
  pattern: 'notes/**',
  regex: false,
  action: 'allow',
  label: 'anything under notes/',
  matches: 3,
  denied_matches: 1,
  history: 4,
};
const file: RuleSuggestion = { ...folder, pattern: 'notes/d.txt', label: 'the file notes/d.txt', matches: 1, denied_matches: 0 };

const ruleSuggestions = vi.fn(async (_id: string) => [file, folder]);
const addRule = vi.fn(async (..._args: unknown[]): Promise<unknown> => ({ already_existed: false }));
const decide = vi.fn(async (decisions: DecisionRequest[], _channel: string) => decisions.map((d) => ({ approval_id: d.approval_id, error: null })));

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return {
    ...actual,
    api: {
      ...actual.api,
      ruleSuggestions: (id: string) => ruleSuggestions(id),
      addRule: (...a: unknown[]) => addRule(...a),
      decide: (d: DecisionRequest[], channel: string) => decide(d, channel),
    },
  };
});

describe('RuleSuggestions', () => {
  it('previews each rule against History and warns where a person denied what it would allow', async () => {
    render(RuleSuggestions, { item: item(4) });
    expect(ruleSuggestions).not.toHaveBeenCalled();
    await userEvent.click(screen.getByTestId('make-rule'));
    expect(ruleSuggestions).toHaveBeenCalledWith('apr_4');
    const list = await screen.findByTestId('rule-suggestions');
    expect(list.textContent).toContain('matches 1 of 4 past calls');
    expect(list.textContent).toContain('matches 3 of 4 past calls');
    const warnings = screen.getAllByTestId('rule-warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].textContent).toContain('1 of them you denied');
  });

  it('saves the chosen rule as it was previewed', async () => {
    render(RuleSuggestions, { item: item(4) });
    await userEvent.click(screen.getByTestId('make-rule'));
    await screen.findByTestId('rule-suggestions');
    await userEvent.click(screen.getAllByRole('button', { name: 'Save rule' })[1]);
    expect(addRule).toHaveBeenCalledWith('builtin', 'write_file', '/path', { kind: 'glob', pattern: 'notes/**' }, 'allow');
    expect((await screen.findByTestId('rule-saved')).textContent).toContain('/path notes/**');
  });

  it('saves the rule and approves the call it came from in one click', async () => {
    addRule.mockClear();
    decide.mockClear();
    render(RuleSuggestions, { item: item(4) });
    await userEvent.click(screen.getByTestId('make-rule'));
    await screen.findByTestId('rule-suggestions');
    await userEvent.click(screen.getAllByTestId('rule-save-approve')[1]);
    expect(addRule).toHaveBeenCalledWith('builtin', 'write_file', '/path', { kind: 'glob', pattern: 'notes/**' }, 'allow');
    expect(decide).toHaveBeenCalledTimes(1);
    const [decisions, channel] = decide.mock.calls[0];
    expect(channel).toBe('inbox');
    expect(decisions.map(flat)).toEqual([expect.objectContaining({ approval_id: 'apr_4', approve: true, args_hash: 'hash_4' })]);
  });

  it('says so when the rule was there already', async () => {
    addRule.mockResolvedValueOnce({ already_existed: true });
    render(RuleSuggestions, { item: item(4) });
    await userEvent.click(screen.getByTestId('make-rule'));
    await screen.findByTestId('rule-suggestions');
    await userEvent.click(screen.getAllByRole('button', { name: 'Save rule' })[0]);
    const said = (await screen.findByTestId('rule-saved')).textContent;
    expect(said).toContain('already there');
    expect(said).toContain('nothing changed');
  });
});
