import { render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { InboxItem } from '../lib/bindings/InboxItem';
import Phone from './Phone.svelte';

function item(id: string, path: string): InboxItem {
  return {
    approval_id: id, tool_call_id: id, kind: 'tool_call', session: 's', session_id: 'ses_s', server: 'builtin',
    tool: 'write_file', args: { path, content: 'x' }, args_hash: `hash_${id}`, why: 'approval required',
    created_at: '2026-11-25T07:00:00Z', expires_at: null, description: null, input_schema: null, editable: true,
    available_decisions: ['approve', 'edit', 'deny', 'allow_for_chat', 'remember', 'grant'],
  };
}

/** The phone server as `fetch` sees it: the inbox, or 401 once the device is revoked. */
function server(inbox: InboxItem[] | 'revoked') {
  return vi.fn(async (path: string) => {
    if (inbox === 'revoked') return new Response(JSON.stringify({ error: 'this device is not paired (or was revoked); pair it again' }), { status: 401 });
    if (path === '/v1/events') return new Response('', { status: 200 });
    return new Response(JSON.stringify(inbox), { status: 200 });
  });
}

beforeEach(() => localStorage.clear());
afterEach(() => {
  vi.unstubAllGlobals();
  history.replaceState(null, '', '/');
});

describe('the phone page', () => {
  it('opens on the item a push named, with the device token on every request', async () => {
    localStorage.setItem('airlock.phone.token', 'tok');
    history.replaceState(null, '', '/#item=apr_2');
    const fetch = server([item('apr_1', 'a.txt'), item('apr_2', 'b.txt')]);
    vi.stubGlobal('fetch', fetch);
    render(Phone);
    await waitFor(() => expect(screen.getAllByTestId('phone-item')).toHaveLength(2));
    const highlighted = screen.getAllByTestId('phone-item').filter((e) => e.classList.contains('highlighted'));
    expect(highlighted.map((e) => e.dataset.approvalId)).toEqual(['apr_2']);
    expect(screen.getByTestId('phone-count').textContent).toBe('2 approvals waiting');
    for (const [, init] of fetch.mock.calls as unknown as [string, RequestInit][]) {
      expect((init.headers as Record<string, string>).authorization).toBe('Bearer tok');
    }
  });

  it('forgets a revoked token and asks to pair again', async () => {
    localStorage.setItem('airlock.phone.token', 'tok');
    vi.stubGlobal('fetch', server('revoked'));
    render(Phone);
    await screen.findByTestId('phone-pair-form');
    expect(screen.getByTestId('phone-error').textContent).toContain('pair it again');
    expect(localStorage.getItem('airlock.phone.token')).toBeNull();
  });

  it('takes the pairing code from the QR code address', async () => {
    history.replaceState(null, '', '/#pair=ABCDE23456');
    render(Phone);
    expect((screen.getByTestId('phone-code-input') as HTMLInputElement).value).toBe('ABCDE23456');
  });
});
