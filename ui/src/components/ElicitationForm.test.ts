import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { RLO } from '../test/fixtures';
import ElicitationForm from './ElicitationForm.svelte';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name' },
    email: { type: 'string', format: 'email', title: 'Email' },
    age: { type: 'integer', title: 'Age' },
    subscribe: { type: 'boolean', title: 'Subscribe' },
    plan: { type: 'string', enum: ['free', 'pro'], title: 'Plan' },
    tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, title: 'Tags' },
  },
  required: ['name', 'plan'],
};

describe('ElicitationForm', () => {
  it('builds fields from the requested schema and accepts typed content', async () => {
    const onanswer = vi.fn();
    const user = userEvent.setup();
    render(ElicitationForm, { message: 'Who are you?', schema, onanswer });
    expect(screen.getByText('Who are you?')).toBeTruthy();
    expect((screen.getByLabelText('Email') as HTMLInputElement).type).toBe('email');
    await user.type(screen.getByLabelText('Name *'), 'Ada');
    await user.type(screen.getByLabelText('Age'), '36');
    await user.click(screen.getByLabelText('Subscribe'));
    await user.selectOptions(screen.getByLabelText('Plan *'), 'pro');
    await user.click(screen.getByLabelText('a'));
    await user.click(screen.getByLabelText('c'));
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(onanswer).toHaveBeenCalledWith('accept', { name: 'Ada', age: 36, subscribe: true, plan: 'pro', tags: ['a', 'c'] });
  });

  it('declines and cancels without content', async () => {
    const onanswer = vi.fn();
    render(ElicitationForm, { message: null, schema, onanswer });
    await userEvent.click(screen.getByRole('button', { name: 'Decline' }));
    expect(onanswer).toHaveBeenLastCalledWith('decline', null);
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(onanswer).toHaveBeenLastCalledWith('cancel', null);
  });

  it("shows hidden characters of the server's message, titles and options as visible escapes", () => {
    const sneaky = {
      type: 'object',
      properties: { plan: { type: 'string', enum: [`free${RLO}`], title: `Plan${RLO}`, description: `Pick\u200B one` } },
    };
    render(ElicitationForm, { message: `Confirm\u001B[2J ${RLO}deleted`, schema: sneaky, onanswer: vi.fn() });
    expect(screen.getByTestId('elicitation-message').textContent).toBe('Confirm\\u{001B}[2J \\u{202E}deleted');
    expect(screen.getByRole('option', { name: 'free\\u{202E}' })).toBeTruthy();
    expect(screen.getByText(/Pick/).textContent).toBe('Pick\\u{200B} one');
    expect(document.body.textContent).not.toMatch(/[\u001B\u200B\u202E]/);
  });

  it('does not accept while a required field is empty, says which, and accepts once it is filled', async () => {
    const onanswer = vi.fn();
    const user = userEvent.setup();
    render(ElicitationForm, { message: 'Who are you?', schema, onanswer });
    expect(screen.queryByRole('alert')).toBeNull();
    await user.type(screen.getByLabelText('Age'), '36');
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(onanswer).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toBe('Required: Name, Plan');
    expect(document.activeElement).toBe(screen.getByLabelText('Name *'));

    // Enter in a field submits the form too: still refused, now naming only what is left.
    await user.type(screen.getByLabelText('Name *'), 'Ada{Enter}');
    expect(onanswer).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toBe('Required: Plan');

    await user.selectOptions(screen.getByLabelText('Plan *'), 'free');
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(onanswer).toHaveBeenCalledTimes(1);
    expect(onanswer).toHaveBeenCalledWith('accept', { name: 'Ada', age: 36, subscribe: false, plan: 'free', tags: [] });
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('still declines and cancels while a required field is empty', async () => {
    const onanswer = vi.fn();
    const user = userEvent.setup();
    render(ElicitationForm, { message: null, schema, onanswer });
    await user.click(screen.getByRole('button', { name: 'Decline' }));
    await user.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(onanswer.mock.calls).toEqual([
      ['decline', null],
      ['cancel', null],
    ]);
  });

  it('does not accept a malformed email, and says which field', async () => {
    const onanswer = vi.fn();
    const user = userEvent.setup();
    render(ElicitationForm, { message: null, schema, onanswer });
    await user.type(screen.getByLabelText('Name *'), 'Ada');
    await user.selectOptions(screen.getByLabelText('Plan *'), 'pro');
    await user.type(screen.getByLabelText('Email'), 'not an email');
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(onanswer).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toBe('Not valid: Email');
    await user.clear(screen.getByLabelText('Email'));
    await user.type(screen.getByLabelText('Email'), 'ada@example.org');
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(onanswer).toHaveBeenCalledWith('accept', expect.objectContaining({ name: 'Ada', email: 'ada@example.org', plan: 'pro' }));
  });
});
