import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { Insights as InsightsView } from '../lib/bindings/Insights';
import type { RuleRow } from '../lib/bindings/RuleRow';
import { MAX_BAR_PX, dailySeries, daysSummary } from '../lib/insightsChart';
import type { DecisionRequest } from '../lib/bindings/DecisionRequest';
import { flat, item } from '../test/fixtures';
import Insights from './Insights.svelte';

const view: InsightsView = {
  tools: [
    {
      server: 'builtin',
      tool: 'run_command',
      requests: 41,
      approved: 41,
      denied: 0,
      median_decide_ms: 800,
      fast_decisions: 30,
      suggestions: [
        {
          text: 'builtin/run_command commands starting `git status`: 41 of 41 approved — make a rule?',
          action: {
            kind: 'add_rule',
            rule: {
              server: 'builtin',
              tool: 'run_command',
              pointer: '/command',
              pattern: 'git status([ \\t][^;&|`$<>(){}\\\\\\n\\r]*)?',
              regex: true,
              action: 'allow',
              label: 'commands starting `git status`',
              matches: 41,
              denied_matches: 0,
              history: 41,
            },
          },
        },
      ],
    },
    { server: 'builtin', tool: 'read_file', requests: 300, approved: 300, denied: 0, median_decide_ms: 2500, fast_decisions: 3, suggestions: [
      { text: 'builtin/read_file: never denied in 300 calls — not required?', action: { kind: 'set_tool', setting: 'not-required' } },
    ] },
  ],
  days: [
    { day: '2026-11-23', requests: 10, approved: 8, denied: 1 },
    { day: '2026-11-24', requests: 0, approved: 0, denied: 0 },
  ],
};

const addRule = vi.fn(async (..._args: unknown[]): Promise<unknown> => ({ already_existed: false }));
const gitRule: RuleRow = {
  rule: { id: 'rule_git', server: 'builtin', tool: 'run_command', pointer: '/command', pattern: { kind: 'glob', pattern: 'git status*' }, effect: 'allow' },
  created_at: '2026-11-24T10:00:00Z',
};
let rules: RuleRow[] = [];
const removeRule = vi.fn(async (id: string) => {
  rules = rules.filter((row) => row.rule.id !== id);
});
const setToolSetting = vi.fn(async (..._args: unknown[]) => undefined);
const decide = vi.fn(async (decisions: DecisionRequest[]) => decisions.map((d) => ({ approval_id: d.approval_id, error: null })));

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return {
    ...actual,
    api: {
      ...actual.api,
      insights: async () => view,
      addRule: (...a: unknown[]) => addRule(...a),
      rules: async () => rules,
      removeRule: (id: string) => removeRule(id),
      setToolSetting: (...a: unknown[]) => setToolSetting(...a),
      decide: (decisions: DecisionRequest[]) => decide(decisions),
    },
  };
});

describe('Insights', () => {
  it('shows each tool with its shares, median and fast decisions', async () => {
    render(Insights);
    const table = await screen.findByTestId('insights-table');
    const row = within(table).getByText('builtin/run_command').closest('tr')!;
    expect(row.textContent).toContain('41');
    expect(row.textContent).toContain('(100%)');
    expect(row.textContent).toContain('800 ms');
    expect(within(table).getByText('builtin/read_file').closest('tr')!.textContent).toContain('2.5 s');
    expect(screen.getByTestId('insights-chart')).toBeTruthy();
  });

  it('applies a suggestion with one click', async () => {
    render(Insights);
    const [rule, stop] = await screen.findAllByTestId('insight-apply');
    expect(rule.textContent).toBe('Add rule');
    await userEvent.click(rule);
    expect(addRule).toHaveBeenCalledWith('builtin', 'run_command', '/command', { kind: 'regex', pattern: view.tools[0].suggestions[0].action.kind === 'add_rule' ? view.tools[0].suggestions[0].action.rule.pattern : '' }, 'allow');
    expect(stop.textContent).toBe('Stop asking');
    await userEvent.click(stop);
    expect(setToolSetting).toHaveBeenCalledWith('builtin', 'read_file', 'not-required');
  });

  it('shows each rule beside its tool and removes it with one click', async () => {
    rules = [gitRule];
    render(Insights);
    const row = await screen.findByTestId('insight-rule');
    expect(row.textContent).toContain('/command glob git status*');
    expect(row.textContent).toContain('allow');
    await userEvent.click(within(row).getByTestId('insight-rule-remove'));
    expect(removeRule).toHaveBeenCalledWith('rule_git');
    await waitFor(() => expect(screen.queryByTestId('insight-rule')).toBeNull());
    expect((await screen.findByTestId('insight-done')).textContent).toContain('Rule removed');
  });

  it('lists the waiting calls a new rule covers and approves them, as shown, in one click', async () => {
    const waiting = item(7, 'demo', { tool: 'run_command', args: { command: 'git status --short' } });
    addRule.mockResolvedValueOnce({ already_existed: false, covers_waiting: [waiting] });
    render(Insights);
    const [rule] = await screen.findAllByTestId('insight-apply');
    await userEvent.click(rule);
    const covered = await screen.findByTestId('insight-covered');
    expect(covered.textContent).toContain('also covers 1 call waiting now');
    expect(within(covered).getByTestId('insight-covered-key').textContent).toBe('git status --short');
    expect(decide).not.toHaveBeenCalled();
    await userEvent.click(within(covered).getByTestId('insight-approve-covered'));
    expect(decide).toHaveBeenCalledTimes(1);
    expect(decide.mock.calls[0][0].map(flat)).toEqual([expect.objectContaining({ approval_id: waiting.approval_id, approve: true, args_hash: waiting.args_hash })]);
    expect((await screen.findByTestId('insight-done')).textContent).toContain('Approved 1 waiting call');
    expect(screen.queryByTestId('insight-covered')).toBeNull();
  });

  it('says so when a suggested rule was there already', async () => {
    addRule.mockResolvedValueOnce({ already_existed: true });
    render(Insights);
    const [rule] = await screen.findAllByTestId('insight-apply');
    await userEvent.click(rule);
    expect((await screen.findByTestId('insight-done')).textContent).toContain('already there');
  });

  it('charts every day, the quiet ones as zeros, split by outcome', () => {
    const series = dailySeries(view.days);
    expect(series.labels).toEqual(['Mon 23 Nov', 'Tue 24 Nov']);
    expect(series.datasets.map((d) => d.data)).toEqual([
      [8, 0],
      [1, 0],
      [1, 0],
    ]);
  });

  it('reads well with one day of data: a bar of bounded width, the day named, its counts in words', async () => {
    const oneDay = [{ day: '2026-11-25', requests: 12, approved: 9, denied: 2 }];
    const series = dailySeries(oneDay);
    expect(series.labels).toEqual(['Wed 25 Nov']);
    expect(series.datasets.every((d) => d.maxBarThickness === MAX_BAR_PX && MAX_BAR_PX <= 60)).toBe(true);
    expect(daysSummary(oneDay)).toBe('Wed 25 Nov: 12 requests — 9 approved, 2 denied, 1 other');
    render(Insights);
    expect((await screen.findByTestId('insights-days')).textContent).toBe('2 days: 10 requests — 8 approved, 1 denied, 1 other');
  });
});
