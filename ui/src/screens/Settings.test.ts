import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { SettingsView } from '../lib/bindings/SettingsView';
import Settings from './Settings.svelte';

let startAtLogin = false;
let rules: SettingsView['rules'] = [];
let tools: SettingsView['tools'] = [];

function view(): SettingsView {
  return {
    app: { version: '0.1.0', data_dir: '/tmp/airlock', workspace: '/tmp/airlock/workspace', api_addr: '127.0.0.1:1' },
    workspace_mode: 'ask',
    provider: null,
    approval_timeout_secs: 0,
    notifications: true,
    start_at_login: startAtLogin,
    servers: [],
    tools,
    rules,
    remembered: [],
    provider_kinds: [],
  };
}

const setStartAtLogin = vi.fn(async (enabled: boolean) => {
  startAtLogin = enabled;
  return enabled;
});

const removeRule = vi.fn(async (id: string) => {
  rules = rules.filter((row) => row.rule.id !== id);
});
const setWorkspace = vi.fn(async (_folder: string) => undefined);
const setToolSetting = vi.fn(async (..._args: unknown[]) => undefined);
const addRule = vi.fn(async (..._args: unknown[]) => ({ ...rules[0].rule, already_existed: true }));

vi.mock('../lib/api', async (original) => {
  const actual = await original<typeof import('../lib/api')>();
  return {
    ...actual,
    api: {
      ...actual.api,
      settings: async () => view(),
      setStartAtLogin: (enabled: boolean) => setStartAtLogin(enabled),
      removeRule: (id: string) => removeRule(id),
      addRule: (...a: unknown[]) => addRule(...a),
      setToolSetting: (...a: unknown[]) => setToolSetting(...a),
      setWorkspace: (folder: string) => setWorkspace(folder),
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

describe('Settings: argument rules', () => {
  const secrets: SettingsView['rules'][number] = {
    rule: { id: 'rule_1', server: 'builtin', tool: 'read_file', pointer: '/path', pattern: { kind: 'glob', pattern: 'secrets/**' }, effect: 'deny' },
    created_at: '2026-11-24T10:00:00Z',
  };

  beforeEach(() => {
    rules = [secrets];
  });

  it('removes a rule with its Remove button', async () => {
    render(Settings);
    const [remove] = await screen.findAllByTestId('rule-remove');
    await userEvent.click(remove);
    expect(removeRule).toHaveBeenCalledWith('rule_1');
    await screen.findByText('Rule removed.');
    await waitFor(() => expect(screen.queryAllByTestId('rule-remove')).toHaveLength(0));
  });

  it('says so when an added rule was there already', async () => {
    render(Settings);
    await screen.findAllByTestId('rule-remove');
    await userEvent.type(screen.getByLabelText('Rule tool'), 'builtin/read_file');
    await userEvent.type(screen.getByLabelText('Pattern'), 'secrets/**');
    await userEvent.click(screen.getByRole('button', { name: 'Add rule' }));
    await screen.findByText('That rule is already there; nothing changed.');
    expect(screen.getAllByTestId('rule-remove')).toHaveLength(1);
  });
});

describe('Settings: the agents\' own tools', () => {
  const agentTool = (tool: string, setting: SettingsView['tools'][number]['setting']): SettingsView['tools'][number] => ({
    server: 'claude-code',
    tool,
    model_name: `claude-code/${tool}`,
    description: `Claude Code's own ${tool} tool, asked through its hook`,
    setting,
    effective: setting === 'server-default' ? 'required' : setting,
    read_only_hint: false,
    from_notification: null,
    approvable_from_notification: false,
    may_allow_from_notification: false,
  });

  beforeEach(() => {
    rules = [];
    tools = [agentTool('Bash', 'server-default'), agentTool('Read', 'not-required')];
    setToolSetting.mockClear();
  });

  it('lists Claude Code\'s tools with their settings, changeable like any server\'s', async () => {
    render(Settings);
    await screen.findByTestId('agent-tools-claude-code');
    expect(screen.queryByTestId('agent-tools-codex')).toBeNull();
    const read = screen.getByLabelText('Setting of claude-code/Read') as HTMLSelectElement;
    expect(read.value).toBe('not-required');
    // A notification never approves an agent's call: no choice is offered.
    expect(screen.queryByLabelText('Approve claude-code/Read from a notification')).toBeNull();
    await userEvent.selectOptions(read, 'required');
    expect(setToolSetting).toHaveBeenCalledWith('claude-code', 'Read', 'required');
  });
});

describe('Settings: the workspace folder', () => {
  it('changes the folder for the next start and says when it applies', async () => {
    tools = [];
    rules = [];
    render(Settings);
    await userEvent.type(await screen.findByLabelText('Workspace folder'), '/home/me/work');
    await userEvent.click(screen.getByRole('button', { name: 'Change workspace' }));
    expect(setWorkspace).toHaveBeenCalledWith('/home/me/work');
    await screen.findByText(/from the next start/);
  });
});
