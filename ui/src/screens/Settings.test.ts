import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { SettingsView } from '../lib/bindings/SettingsView';
import Settings from './Settings.svelte';

let startAtLogin = false;

function view(): SettingsView {
  return {
    app: { version: '0.1.0', data_dir: '/tmp/airlock', workspace: '/tmp/airlock/workspace', api_addr: '127.0.0.1:1' },
    workspace_mode: 'ask',
    provider: null,
    approval_timeout_secs: 0,
    notifications: true,
    start_at_login: startAtLogin,
    servers: [],
    tools: [],
    rules: [],
    remembered: [],
    provider_kinds: [],
  };
}

const setStartAtLogin = vi.fn(async (enabled: boolean) => {
  startAtLogin = enabled;
  return enabled;
});

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return {
    ...actual,
    api: {
      ...actual.api,
      settings: async () => view(),
      setStartAtLogin: (enabled: boolean) => setStartAtLogin(enabled),
      servers: async () => [],
      serverChanges: async () => [],
      agents: async () => [],
      remote: async () => ({ listen: null, devices: [], push: null, addresses: [] }),
    },
  };
});

describe('Settings: start at login', () => {
  beforeEach(() => {
    startAtLogin = false;
    setStartAtLogin.mockClear();
  });

  it('shows the login entry as it is and switches it on and off', async () => {
    render(Settings);
    const toggle = (await screen.findByTestId('start-at-login')) as HTMLInputElement;
    expect(toggle.checked).toBe(false);
    await userEvent.click(toggle);
    expect(setStartAtLogin).toHaveBeenCalledWith(true);
    await screen.findByText('Airlock starts at login.');
    await waitFor(() => expect((screen.getByTestId('start-at-login') as HTMLInputElement).checked).toBe(true));
    await userEvent.click(screen.getByTestId('start-at-login'));
    expect(setStartAtLogin).toHaveBeenLastCalledWith(false);
    await screen.findByText('Airlock no longer starts at login.');
    await waitFor(() => expect((screen.getByTestId('start-at-login') as HTMLInputElement).checked).toBe(false));
  });

  it('says so when the login entry cannot be changed', async () => {
    setStartAtLogin.mockRejectedValueOnce({ code: 'internal', message: 'could not change the login entry: denied' });
    render(Settings);
    await userEvent.click(await screen.findByTestId('start-at-login'));
    await screen.findByText(/could not change the login entry: denied/);
  });
});
