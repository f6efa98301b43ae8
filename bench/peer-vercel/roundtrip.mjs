// The Vercel AI SDK's approval round, the peer of `airlock bench roundtrip` (BENCHMARKS.md):
// user message → the model calls write_file (a tool with needsApproval) → the approval request
// comes back → it is approved → the tool writes the file → the model answers. Nothing is kept
// on disk but the file the tool writes. Against bench/mock_openai.py:
//
//   node roundtrip.mjs --base-url http://127.0.0.1:8765/v1 --rounds 500 --warmup 20
import { generateText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { mkdtempSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const baseURL = arg('base-url', 'http://127.0.0.1:8765/v1');
const rounds = Number(arg('rounds', '200'));
const warmup = Number(arg('warmup', '20'));
const workspace = mkdtempSync(join(tmpdir(), 'peer-vercel-'));

const model = createOpenAI({ baseURL, apiKey: 'bench' }).chat('bench');
const tools = {
  write_file: tool({
    description: 'Write a file in the workspace',
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    needsApproval: true,
    execute: async ({ path, content }) => {
      writeFileSync(join(workspace, path), content);
      return { written: path };
    },
  }),
};

async function round() {
  const messages = [{ role: 'user', content: 'write hello to bench.txt' }];
  const asked = await generateText({ model, tools, messages });
  const request = asked.content.find((part) => part.type === 'tool-approval-request');
  if (!request) throw new Error(`no approval request: ${JSON.stringify(asked.content)}`);
  messages.push(...asked.response.messages);
  messages.push({
    role: 'tool',
    content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }],
  });
  const answered = await generateText({ model, tools, messages });
  if (answered.text !== 'done') throw new Error(`unexpected answer: ${JSON.stringify(answered.content)}`);
}

const samples = [];
for (let i = 0; i < warmup + rounds; i++) {
  const started = process.hrtime.bigint();
  await round();
  if (i >= warmup) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
}
if (readFileSync(join(workspace, 'bench.txt'), 'utf8') !== 'hello') throw new Error('bench.txt not written');
samples.sort((a, b) => a - b);
const pick = (q) => samples[Math.min(samples.length - 1, Math.max(0, Math.ceil(samples.length * q) - 1))];
const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
console.log(`rounds=${samples.length} mean_ms=${mean.toFixed(3)} p50_ms=${pick(0.5).toFixed(3)} p99_ms=${pick(0.99).toFixed(3)}`);
