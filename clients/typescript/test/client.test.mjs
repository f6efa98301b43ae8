// The client alone (no engine needed): without a running Airlock it says so and approves nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Airlock, EngineUnavailable } from 'airlock-client';

test('no engine: a clear error, nothing approved', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'airlock-none-'));
  const airlock = new Airlock({ client: 'test-app', dataDir });
  await assert.rejects(
    airlock.request({ session: 's', tool: 't', args: {}, toolCallId: 'c1' }),
    (error) => error instanceof EngineUnavailable && /Airlock is not running/.test(error.message),
  );
});

test('a program needs a name', () => {
  assert.throws(() => new Airlock({ client: ' ' }), /name the program/);
});
