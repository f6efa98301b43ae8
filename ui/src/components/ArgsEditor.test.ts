import { render, screen, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { writeFileSchema } from '../test/fixtures';
import ArgsEditor from './ArgsEditor.svelte';

describe('ArgsEditor', () => {
  it('shows the edit diff inside one fixed box, so the buttons after it do not move when it appears', async () => {
    const user = userEvent.setup();
    render(ArgsEditor, { original: { path: 'a.txt', content: 'hi' }, schema: writeFileSchema, onchange: vi.fn() });
    const outcome = screen.getByTestId('edit-outcome');
    expect(within(outcome).getByText('No change yet.')).toBeTruthy();
    const editor = screen.getByLabelText('Arguments (JSON)');
    await user.clear(editor);
    await user.type(editor, '{{"path": "b.txt", "content": "hi"}');
    expect(screen.getByTestId('edit-outcome')).toBe(outcome);
    expect(within(outcome).getByTestId('edit-diff').textContent).toContain('+   "path": "b.txt"');
  });
});
