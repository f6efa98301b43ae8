// A Vercel AI SDK program whose `delete_file` tool needs approval, answered by Airlock; the
// SDK tests (tests/sdk-clients/test_adapters.py) run it as its own process.
//
//   start             generate until the approval request, post it to Airlock, save the messages, exit
//   resume [SECONDS]  answer the saved approval requests (waiting SECONDS at most), finish
//   run               both in one process, waiting as long as it takes
//
// The tool appends each call it runs to $APP_RAN, so a test counts runs across processes.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { generateText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { z } from 'zod';
import { Airlock, AirlockError, StillPending } from 'airlock-client';
import { AISDKApprovals } from 'airlock-client/ai-sdk';

const { APP_STATE, APP_RAN, APP_SESSION, MODEL_URL, AIRLOCK_DATA_DIR } = process.env;
const approvals = new AISDKApprovals(new Airlock({ client: 'ai-sdk-app', dataDir: AIRLOCK_DATA_DIR }), {
  session: APP_SESSION,
});
const tools = {
  delete_file: tool({
    description: 'Delete the file at `path`.',
    inputSchema: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }) => {
      appendFileSync(APP_RAN, JSON.stringify({ path }) + '\n');
      return `deleted ${path}`;
    },
  }),
};
const model = createOpenAI({ baseURL: MODEL_URL, apiKey: 'test' }).chat('scripted');

async function start() {
  const messages = [{ role: 'user', content: 'Delete a.txt' }];
  const result = await generateText({ model, tools, messages });
  messages.push(...result.response.messages);
  writeFileSync(APP_STATE, JSON.stringify(messages));
  const decisions = await approvals.submit(result.content, tools);
  console.log(JSON.stringify(Object.fromEntries([...decisions].map(([id, d]) => [id, d.approvalId]))));
}

async function resume(timeoutMs) {
  const messages = JSON.parse(readFileSync(APP_STATE, 'utf8'));
  let answer;
  try {
    answer = await approvals.answer(messages, tools, timeoutMs);
  } catch (error) {
    if (error instanceof StillPending) {
      console.error(error.message);
      process.exit(3);
    }
    throw error;
  }
  const result = await generateText({ model, tools, messages: [...messages, answer] });
  console.log(JSON.stringify({ output: result.text }));
}

const [command, seconds] = process.argv.slice(2);
try {
  if (command === 'start') await start();
  else if (command === 'resume') await resume(seconds === undefined ? undefined : Number(seconds) * 1000);
  else if (command === 'run') {
    await start();
    await resume(undefined);
  }
} catch (error) {
  if (error instanceof AirlockError) {
    console.error(`airlock: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
