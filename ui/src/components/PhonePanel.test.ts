import { clearMocks, mockIPC } from '@tauri-apps/api/mocks';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it } from 'vitest';
import type { Pairing } from '../lib/bindings/Pairing';
import type { RemoteView } from '../lib/bindings/RemoteView';
import { RLO } from '../test/fixtures';
import PhonePanel from './PhonePanel.svelte';

type Call = { cmd: string; args: Record<string, unknown> };

const pairing: Pairing = {
  url: 'https://100.64.0.7:8443',
  code: 'K7P2QX9MWA',
  fingerprint: 'AB:CD:EF:01:23:45:67:89',
  expires_at: '2026-11-25T10:05:00Z',
};

function view(listen: string | null, over: Partial<RemoteView> = {}): RemoteView {
  return {
    listen,
    devices: [
      { id: 'dev-1', name: `Pixel${RLO}`, created_at: '2026-11-24T09:00:00Z', last_used: '2026-11-25T08:00:00Z', revoked_at: null },
      { id: 'dev-2', name: 'Old phone', created_at: '2026-11-01T09:00:00Z', last_used: null, revoked_at: '2026-11-02T09:00:00Z' },
    ],
    push: null,
    addresses: ['192.168.1.20', '100.64.0.7', 'fd7a:115c:a1e0::1'],
    ...over,
  };
}

/** Mocks the shell's commands over `state`; every call is recorded. */
function shell(state: { listen: string | null; push: RemoteView['push'] }): Call[] {
  const calls: Call[] = [];
  mockIPC((cmd, payload) => {
    const args = (payload ?? {}) as Record<string, unknown>;
    calls.push({ cmd, args });
    switch (cmd) {
      case 'remote':
        return view(state.listen, { push: state.push });
      case 'set_remote_listen':
        state.listen = args.listen as string | null;
        return null;
      case 'pair_phone':
        return pairing;
      case 'revoke_device':
        return true;
      case 'set_push':
        return null;
      default:
        return null;
    }
  });
  return calls;
}

afterEach(() => clearMocks());

describe('PhonePanel', () => {
  it('turns the phone inbox on at an address picked from the suggestions', async () => {
    const user = userEvent.setup();
    const calls = shell({ listen: null, push: null });
    render(PhonePanel);
    expect((await screen.findByText(/never listens on every interface/)).textContent).toContain('Tailscale');
    await user.click(screen.getByText('100.64.0.7:8443'));
    expect((screen.getByTestId('phone-listen') as HTMLInputElement).value).toBe('100.64.0.7:8443');
    expect(screen.getByText('[fd7a:115c:a1e0::1]:8443')).toBeTruthy();
    await user.click(screen.getByTestId('phone-enable'));
    await waitFor(() => expect(calls.find((c) => c.cmd === 'set_remote_listen')?.args).toEqual({ listen: '100.64.0.7:8443' }));
    expect((await screen.findByText(/Serving/)).textContent).toContain('https://100.64.0.7:8443');
    expect(screen.getByTestId('phone-disable')).toBeTruthy();
    await user.click(screen.getByTestId('phone-disable'));
    await waitFor(() => expect(calls.filter((c) => c.cmd === 'set_remote_listen').at(-1)?.args).toEqual({ listen: null }));
    await screen.findByTestId('phone-enable');
  });

  it('shows a refusal as it is', async () => {
    const user = userEvent.setup();
    mockIPC((cmd) => {
      if (cmd === 'remote') return view(null);
      if (cmd === 'set_remote_listen') throw { code: 'invalid', message: '0.0.0.0:8443 listens on every interface' };
      return null;
    });
    render(PhonePanel);
    await user.type(await screen.findByTestId('phone-listen'), '0.0.0.0:8443');
    await user.click(screen.getByTestId('phone-enable'));
    expect((await screen.findByTestId('phone-error')).textContent).toContain('listens on every interface');
  });

  it('pairs a phone: the QR code, the code and the fingerprint', async () => {
    const user = userEvent.setup();
    const calls = shell({ listen: '100.64.0.7:8443', push: null });
    render(PhonePanel);
    await user.click(await screen.findByTestId('phone-pair'));
    const qr = (await screen.findByTestId('phone-qr')) as HTMLImageElement;
    expect(qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml/);
    expect(decodeURIComponent(qr.getAttribute('src') ?? '')).toContain('<svg');
    expect(screen.getByTestId('phone-code').textContent).toBe('K7P2QX9MWA');
    expect(screen.getByTestId('phone-url').textContent).toBe('https://100.64.0.7:8443');
    expect(screen.getByTestId('phone-fingerprint').textContent).toBe('AB:CD:EF:01:23:45:67:89');
    expect(screen.getByText(/certificate is not trusted/).textContent).toContain('SHA-256 fingerprint');
    // Where each phone's browser shows it, step by step (its warning page hides it).
    const help = screen.getByTestId('phone-cert-help').textContent?.replace(/\s+/g, ' ') ?? '';
    expect(help).toContain('tap Not secure');
    expect(help).toContain('SHA-256 fingerprint');
    expect(help).toContain('tap Show Details, then the link view the certificate');
    expect(help).toContain('SHA-256 under Fingerprints');
    expect(calls.some((c) => c.cmd === 'pair_phone')).toBe(true);
  });

  it('lists the devices, their names made visible, and revokes a live one', async () => {
    const user = userEvent.setup();
    const calls = shell({ listen: '100.64.0.7:8443', push: null });
    render(PhonePanel);
    const rows = await screen.findAllByTestId('phone-device');
    expect(rows).toHaveLength(2);
    expect(within(rows[0]).getByTestId('hidden-char')).toBeTruthy();
    expect(rows[0].textContent).toContain('last used 2026-11-25 08:00:00');
    expect(rows[1].textContent).toContain('last used never');
    expect(rows[1].textContent).toContain('revoked');
    expect(within(rows[1]).queryByTestId('phone-revoke')).toBeNull();
    await user.click(within(rows[0]).getByTestId('phone-revoke'));
    await waitFor(() => expect(calls.find((c) => c.cmd === 'revoke_device')?.args).toEqual({ id: 'dev-1' }));
  });

  it('saves the push: an empty token keeps the saved one (null), and turns it off', async () => {
    const user = userEvent.setup();
    const calls = shell({ listen: null, push: { server: 'https://ntfy.example.org', topic: 'airlock-me', has_token: true } });
    render(PhonePanel);
    await screen.findByText(/leave empty to keep the saved token/);
    expect(screen.getByText(/Only the number of waiting approvals is sent/)).toBeTruthy();
    await waitFor(() => expect((screen.getByTestId('push-server') as HTMLInputElement).value).toBe('https://ntfy.example.org'));
    await user.clear(screen.getByTestId('push-topic'));
    await user.type(screen.getByTestId('push-topic'), 'airlock-new');
    await user.click(screen.getByTestId('push-save'));
    await waitFor(() =>
      expect(calls.find((c) => c.cmd === 'set_push')?.args).toEqual({
        push: { server: 'https://ntfy.example.org', topic: 'airlock-new', token: null },
      }),
    );
    await user.click(screen.getByTestId('push-off'));
    await waitFor(() => expect(calls.filter((c) => c.cmd === 'set_push').at(-1)?.args).toEqual({ push: null }));
  });
});
