import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { checkEdit } from '../lib/schema';
import { RLO, everythingForm, everythingFormSorted, everythingOrder } from '../test/fixtures';
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

  it('shows only the answers the item offers', () => {
    render(ElicitationForm, { message: 'Sure?', schema: { type: 'object', properties: {} }, actions: ['accept', 'cancel'], onanswer: vi.fn() });
    expect(screen.getAllByRole('button').map((b) => b.textContent?.trim())).toEqual(['Accept', 'Cancel']);
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

  describe("server-everything's trigger-elicitation-request form", () => {
    /** What the form sends when the person types a name and leaves every default as it is. */
    const withDefaults = {
      name: 'Ada Lovelace',
      check: false,
      firstLine: 'It was a dark and stormy night.',
      integer: 42,
      number: 3.14,
      untitledSingleSelectEnum: 'Monica',
      untitledMultipleSelectEnum: ['Guitar'],
      titledSingleSelectEnum: 'hero-1',
      titledMultipleSelectEnum: ['fish-1'],
      legacyTitledEnum: 'pet-1',
    };

    it("shows every field in the server's order, titled options by their titles, defaults chosen", () => {
      render(ElicitationForm, { message: 'Please provide inputs for the following fields:', schema: everythingFormSorted, order: everythingOrder, onanswer: vi.fn() });
      expect(screen.getAllByTestId('elicitation-field').map((f) => f.getAttribute('data-field'))).toEqual(everythingOrder);
      // Required marks: the one required field, nothing else.
      expect(screen.getByLabelText('String *')).toBeTruthy();
      expect(screen.queryByLabelText('String with default *')).toBeNull();
      expect((screen.getByLabelText('String with default') as HTMLInputElement).value).toBe('It was a dark and stormy night.');
      expect((screen.getByLabelText('String with uri format') as HTMLInputElement).type).toBe('url');
      expect((screen.getByLabelText('String with date format') as HTMLInputElement).type).toBe('date');
      const integer = screen.getByLabelText('Integer') as HTMLInputElement;
      expect([integer.value, integer.min, integer.max, integer.step]).toEqual(['42', '1', '100', '1']);
      expect(screen.getAllByTestId('elicitation-limits').map((l) => l.textContent)).toEqual(['1 to 100', '0 to 1000', 'choose 1 to 3', 'choose 1 to 3']);
      // Titled single select (oneOf) and legacy enumNames: the titles are shown, the values sent.
      const hero = screen.getByLabelText('Titled Single Select Enum') as HTMLSelectElement;
      expect([...hero.options].map((o) => o.textContent)).toEqual(['—', 'Superman', 'Green Lantern', 'Wonder Woman']);
      expect(hero.value).toBe('hero-1');
      const pet = screen.getByLabelText('Legacy Titled Single Select Enum') as HTMLSelectElement;
      expect(pet.selectedOptions[0].textContent).toBe('Cats');
      // Multi-selects: checkboxes, the titled one (items.anyOf) by title, defaults ticked.
      expect((screen.getByLabelText('Guitar') as HTMLInputElement).checked).toBe(true);
      expect((screen.getByLabelText('Piano') as HTMLInputElement).checked).toBe(false);
      expect((screen.getByLabelText('Tuna') as HTMLInputElement).checked).toBe(true);
      expect((screen.getByLabelText('Trout') as HTMLInputElement).checked).toBe(false);
    });

    it('accepts with its defaults once the required name is typed, and the answer fits the schema', async () => {
      const onanswer = vi.fn();
      const user = userEvent.setup();
      render(ElicitationForm, { message: null, schema: everythingFormSorted, order: everythingOrder, onanswer });
      await user.type(screen.getByLabelText('String *'), 'Ada Lovelace');
      await user.click(screen.getByRole('button', { name: 'Accept' }));
      expect(screen.queryByRole('alert')).toBeNull();
      expect(onanswer).toHaveBeenCalledWith('accept', withDefaults);
      // The very schema the server sent accepts it (the engine checks it again).
      expect(checkEdit(JSON.stringify(onanswer.mock.calls[0][1]), everythingForm)).toEqual({ ok: true, value: withDefaults });
    });

    it('names the field and its limit when an answer is out of range, and sends nothing', async () => {
      const onanswer = vi.fn();
      const user = userEvent.setup();
      render(ElicitationForm, { message: null, schema: everythingForm, onanswer });
      await user.type(screen.getByLabelText('String *'), 'Ada');
      await user.clear(screen.getByLabelText('Integer'));
      await user.type(screen.getByLabelText('Integer'), '500');
      for (const instrument of ['Piano', 'Violin', 'Drums']) await user.click(screen.getByLabelText(instrument));
      await user.click(screen.getByRole('button', { name: 'Accept' }));
      expect(onanswer).not.toHaveBeenCalled();
      expect(screen.getByRole('alert').textContent).toBe('Not valid: Integer (at most 100), Untitled Multiple Select Enum (choose at most 3)');
      expect(document.activeElement).toBe(screen.getByLabelText('Integer'));
      await user.clear(screen.getByLabelText('Integer'));
      await user.type(screen.getByLabelText('Integer'), '7');
      await user.click(screen.getByLabelText('Drums'));
      await user.click(screen.getByLabelText('Salmon'));
      await user.selectOptions(screen.getByLabelText('Titled Single Select Enum'), 'Wonder Woman');
      await user.click(screen.getByRole('button', { name: 'Accept' }));
      expect(onanswer).toHaveBeenCalledWith(
        'accept',
        expect.objectContaining({ integer: 7, untitledMultipleSelectEnum: ['Guitar', 'Piano', 'Violin'], titledMultipleSelectEnum: ['fish-1', 'fish-2'], titledSingleSelectEnum: 'hero-3' }),
      );
    });
  });

  it('sends a date-time as RFC 3339 and leaves an unticked optional multi-select out', async () => {
    const onanswer = vi.fn();
    const user = userEvent.setup();
    const form = {
      type: 'object',
      properties: {
        when: { type: 'string', format: 'date-time', title: 'When' },
        tags: { type: 'array', title: 'Tags', minItems: 1, items: { type: 'string', enum: ['a', 'b'] } },
      },
    };
    render(ElicitationForm, { message: null, schema: form, onanswer });
    expect((screen.getByLabelText('When') as HTMLInputElement).type).toBe('datetime-local');
    await user.type(screen.getByLabelText('When'), '2026-11-25T14:02');
    await user.click(screen.getByRole('button', { name: 'Accept' }));
    expect(onanswer).toHaveBeenCalledWith('accept', { when: new Date('2026-11-25T14:02').toISOString() });
  });

  it('keeps what was typed when the caller passes an equal order again', async () => {
    const user = userEvent.setup();
    const shown = render(ElicitationForm, { message: null, schema: everythingForm, order: [...everythingOrder], onanswer: vi.fn() });
    await user.type(screen.getByLabelText('String *'), 'Ada');
    await shown.rerender({ message: null, schema: everythingForm, order: [...everythingOrder], onanswer: vi.fn() });
    expect((screen.getByLabelText('String *') as HTMLInputElement).value).toBe('Ada');
  });
});
