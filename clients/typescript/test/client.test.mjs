// The client alone (no engine needed): without a running Airlock, or without a token of the
// program's own, it says so and approves nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Airlock, AirlockError, EngineUnavailable } from 'airlock-client';

test('no engine: a clear error, nothing approved', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'airlock-none-'));
  const airlock = new Airlock({ client: 'test-app', dataDir, token: 'airlock_agent_x' });
  await assert.rejects(
    airlock.request({ session: 's', tool: 't', args: {}, toolCallId: 'c1' }),
    (error) => error instanceof EngineUnavailable && /Airlock is not running/.test(error.message),
  );
});

test('no token of its own: a clear error naming the command that issues one, nothing sent', async () => {
  const saved = process.env.AIRLOCK_TOKEN;
  delete process.env.AIRLOCK_TOKEN;
  try {
    // Port 9 (discard) on loopback: nothing may be sent there, and nothing is.
    const airlock = new Airlock({ client: 'test-app', baseUrl: 'http://127.0.0.1:9' });
    await assert.rejects(
      airlock.request({ session: 's', tool: 't', args: {}, toolCallId: 'c1' }),
      (error) =>
        error instanceof AirlockError &&
        !(error instanceof EngineUnavailable) &&
        /no token of test-app's own/.test(error.message) &&
        /airlock agents token test-app/.test(error.message),
    );
  } finally {
    if (saved !== undefined) process.env.AIRLOCK_TOKEN = saved;
  }
});

test('a program needs a name', () => {
  assert.throws(() => new Airlock({ client: ' ' }), /name the program/);
});
