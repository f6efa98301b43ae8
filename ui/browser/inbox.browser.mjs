// The built UI in Debian's chromium (playwright-core), with the shell mocked by mockIPC:
// 10,000 pending items open, select all, approve all in one batch. Times go to stdout for
// BENCHMARKS.md (not asserted); a screenshot goes to test-output/playwright.
import assert from 'node:assert/strict';
import { createReadStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve } from 'node:path';
import { chromium } from 'playwright-core';

const ui = resolve(import.meta.dirname, '..');
const out = resolve(process.env.AIRLOCK_PLAYWRIGHT_OUT ?? join(ui, '..', 'test-output', 'playwright'));
mkdirSync(out, { recursive: true });
const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };
const server = createServer((req, res) => {
  const path = join(ui, 'dist', new URL(req.url ?? '/', 'http://x').pathname);
  const file = existsSync(path) && !path.endsWith('/') ? path : join(ui, 'dist', 'index.html');
  res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
  createReadStream(file).pipe(res);
});
await new Promise((done) => server.listen(0, '127.0.0.1', done));
const url = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript({ content: 'window.__airlockMock = { items: 10000, decided: [], calls: [] };' });
  await page.addInitScript({ content: readFileSync(join(ui, 'dist-mock', 'mock-backend.js'), 'utf8') });
  await page.goto(url);
  await page.getByTestId('nav-inbox-count').waitFor();
  assert.equal(await page.getByTestId('nav-inbox-count').textContent(), '10000');

  let start = Date.now();
  await page.getByTestId('nav-inbox').click();
  await page.getByTestId('inbox-item').first().waitFor();
  const openMs = Date.now() - start;
  assert.equal(await page.getByTestId('inbox-count').textContent(), '10000 pending');
  const rendered = await page.getByTestId('inbox-item').count();
  assert.ok(rendered < 80, `only visible rows are rendered, not ${rendered}`);
  await page.screenshot({ path: join(out, 'inbox-10000.png') });

  // A write shown as a diff against the file on disk; the buttons stay where they were while the
  // file is read and after its diff replaces the content.
  await page.getByTestId('inbox-item').nth(1).click();
  const approveButton = page.getByTestId('approve');
  const before = await approveButton.boundingBox();
  await page.getByTestId('write-diff').waitFor();
  const after = await approveButton.boundingBox();
  assert.deepEqual(after, before, 'Approve did not move when the diff arrived');
  assert.match(await page.getByTestId('disk-status').textContent(), /Replaces the file on disk: −30 \+1 lines/);
  await page.screenshot({ path: join(out, 'inbox-write-diff.png') });

  await page.getByLabel('Select all').check();
  assert.equal(await page.getByTestId('inbox-count').textContent(), '10000 pending · 10000 selected');
  start = Date.now();
  await page.getByRole('button', { name: 'Approve selected' }).click();
  await page.getByText('Nothing is waiting for you.').waitFor();
  const approveMs = Date.now() - start;
  const decided = await page.evaluate(() => window.__airlockMock.decided);
  assert.equal(decided.length, 10000);
  assert.ok(decided.every((d) => d.decision.kind === 'approve' && (d.decision.args ?? null) === null && d.args_hash === `hash_${d.approval_id.slice(4)}`));
  assert.deepEqual(errors, []);

  // The chat shows the pending call as seed 003's prompt inside the assistant message.
  const chat = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  chat.on('pageerror', (e) => errors.push(String(e)));
  await chat.addInitScript({ content: 'window.__airlockMock = { items: 3, decided: [], calls: [] };' });
  await chat.addInitScript({ content: readFileSync(join(ui, 'dist-mock', 'mock-backend.js'), 'utf8') });
  await chat.goto(url);
  await chat.getByRole('button', { name: 'research' }).click();
  const prompt = chat.getByTestId('assistant-message').getByRole('region', { name: 'Permission request' });
  await prompt.waitFor();
  assert.equal(await prompt.getByRole('heading').textContent(), 'Allow tool call from builtin?');
  // The call shown by what it does (a command in a shell block), its JSON on request.
  assert.match(await prompt.getByTestId('call-command').textContent(), /make test-0/);
  await prompt.getByRole('button', { name: /Arguments as JSON/ }).click();
  assert.match(await prompt.getByTestId('prompt-args').textContent(), /make test-0/);
  await chat.screenshot({ path: join(out, 'chat-prompt.png') });
  await prompt.getByRole('button', { name: 'Deny' }).click();
  await prompt.getByLabel('Reason').fill('not on Fridays');
  await prompt.getByRole('button', { name: 'Deny' }).click();
  await chat.waitForFunction(() => window.__airlockMock.decided.length === 1);
  const [denied] = await chat.evaluate(() => window.__airlockMock.decided);
  assert.deepEqual(
    { id: denied.approval_id, kind: denied.decision.kind, reason: denied.decision.reason, session: denied.session },
    { id: 'apr_0', kind: 'deny', reason: 'not on Fridays', session: 'research' },
  );
  assert.deepEqual(errors, []);
  console.log(`inbox with 10000 pending: opened in ${openMs} ms, approve all in ${approveMs} ms (browser, mocked shell)`);
} finally {
  await browser.close();
  server.close();
}
