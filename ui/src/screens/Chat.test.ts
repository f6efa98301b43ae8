import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import Chat from './Chat.svelte';

describe('Chat', () => {
  it('New chat puts the cursor in its name field', async () => {
    const user = userEvent.setup();
    render(Chat);
    await user.click(screen.getByRole('button', { name: 'New chat' }));
    // The button had the focus when the field appeared: the field takes it, so one can type.
    expect(document.activeElement).toBe(screen.getByLabelText('New chat name'));
  });
});
