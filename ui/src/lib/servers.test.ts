import { describe, expect, it } from 'vitest';
import { configToForm, emptyForm, formToConfig } from './servers';

describe('the MCP server form', () => {
  it('sends a stdio server with one argument per line and KEY=VALUE environment', () => {
    const form = { ...emptyForm(), name: 'files', command: 'npx', args: '-y\n@scope/server\n/my folder\n', env: 'TOKEN=a=b\n' };
    expect(formToConfig(form)).toEqual({
      config: { kind: 'stdio', command: 'npx', args: ['-y', '@scope/server', '/my folder'], env: { TOKEN: 'a=b' }, cwd: null },
    });
  });

  it('sends an HTTP server with its headers', () => {
    const form = { ...emptyForm(), name: 'remote', kind: 'http' as const, url: 'https://x.test/mcp', headers: 'Authorization: Bearer t' };
    expect(formToConfig(form)).toEqual({ config: { kind: 'http', url: 'https://x.test/mcp', headers: { Authorization: 'Bearer t' } } });
  });

  it('refuses what cannot start, saying why', () => {
    expect(formToConfig({ ...emptyForm(), name: 'bad name', command: 'x' })).toEqual({ error: 'The name takes letters, digits, - and _' });
    expect(formToConfig({ ...emptyForm(), name: 'a' })).toEqual({ error: 'The command is empty' });
    expect(formToConfig({ ...emptyForm(), name: 'a', command: 'x', env: 'NOVALUE' })).toHaveProperty('error');
    expect(formToConfig({ ...emptyForm(), name: 'a', kind: 'http', url: 'ftp://x' })).toEqual({
      error: 'The URL must start with http:// or https://',
    });
  });

  it('round-trips a stored definition through the form', () => {
    const config = { kind: 'stdio', command: 'node', args: ['server.js', '--port 1'], env: { A: '1' }, cwd: '/srv' };
    expect(formToConfig(configToForm('s', config))).toEqual({ config });
  });
});
