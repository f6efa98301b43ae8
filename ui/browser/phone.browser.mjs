// The phone inbox in Debian's chromium as a Pixel 7 (playwright-core's device profile), against a
// real Airlock phone server over HTTPS. Driven by crates/remote/tests/phone_browser.rs, which
// runs the engine and the scripted model and checks what the model reads afterwards:
//   env PHONE_URL, PHONE_CODE; prints `decided` once the three items are decided; on a line
//   `another` waits for two more to arrive live and approves both at once (`decided again`); on a line
//   `revoked` checks the page asks to pair again. Screenshots go to
//   test-output/playwright.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium, devices } from 'playwright-core';

const url = process.env.PHONE_URL;
const code = process.env.PHONE_CODE;
assert.ok(url && code, 'PHONE_URL and PHONE_CODE are set');
const out = resolve(process.env.AIRLOCK_PLAYWRIGHT_OUT ?? join(import.meta.dirname, '..', '..', 'test-output', 'playwright'));
mkdirSync(out, { recursive: true });
const stdin = createInterface({ input: process.stdin });
const lines = stdin[Symbol.asyncIterator]();

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
try {
  // The person accepted the certificate after checking its fingerprint (the test's client
  // trusts exactly Airlock's certificate; a browser profile cannot be told one in advance).
  const context = await browser.newContext({ ...devices['Pixel 7'], ignoreHTTPSErrors: true });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));

  // Pairing: the QR code's address carries the code; the device is named after the phone.
  await page.goto(`${url}/#pair=${code}`);
  assert.equal(await page.getByTestId('phone-code-input').inputValue(), code);
  assert.equal(await page.getByTestId('phone-name-input').inputValue(), 'Pixel 7');
  await page.screenshot({ path: join(out, 'phone-pair.png') });
  await page.getByTestId('phone-pair-submit').click();
  await page.getByTestId('phone-live').filter({ hasText: 'live' }).waitFor();
  await page.getByTestId('phone-item').nth(2).waitFor();
  assert.equal(await page.getByTestId('phone-item').count(), 3);
  assert.equal(await page.getByTestId('phone-count').textContent(), '3 approvals waiting');
  assert.equal(await page.evaluate(() => location.hash), '', 'the code leaves the address bar');
  await page.screenshot({ path: join(out, 'phone-inbox.png'), fullPage: true });

  const item = (path) => page.getByTestId('phone-item').filter({ hasText: `"path": "${path}"` });
  // Approve a.txt.
  await item('a.txt').getByTestId('phone-approve').click();
  await item('a.txt').waitFor({ state: 'detached' });
  // Deny b.txt with a reason for the model.
  await item('b.txt').getByTestId('phone-deny').click();
  await item('b.txt').getByTestId('phone-deny-reason').fill('not b, use c');
  await item('b.txt').getByTestId('phone-deny-confirm').click();
  await item('b.txt').waitFor({ state: 'detached' });
  // Edit c.txt: a change the schema refuses keeps the button off; a valid one approves.
  // (While edited, the arguments are in the editor, not the card's text: find it by its id.)
  const c = page.locator(`[data-approval-id="${await item('c.txt').getAttribute('data-approval-id')}"]`);
  await c.getByTestId('phone-edit').click();
  const editor = c.getByLabel('Arguments (JSON)');
  await editor.fill('{"path": "c.txt"}');
  assert.equal(await c.getByTestId('phone-approve-edited').isDisabled(), true);
  await editor.fill('{"path": "c.txt", "content": "edited on the phone"}');
  await page.screenshot({ path: join(out, 'phone-edit.png'), fullPage: true });
  await c.getByTestId('phone-approve-edited').click();
  await page.getByText('Nothing is waiting for you.').waitFor();
  assert.equal(await page.getByTestId('phone-count').textContent(), 'nothing waiting');

  // The device's token opens nothing but the inbox: settings, servers, rules answer 403.
  const forbidden = await page.evaluate(async () => {
    const token = localStorage.getItem('airlock.phone.token');
    const statuses = {};
    for (const path of ['/v1/settings', '/v1/servers', '/v1/rules', '/v1/remote/devices', '/v1/sessions']) {
      statuses[path] = (await fetch(path, { headers: { authorization: `Bearer ${token}` } })).status;
    }
    return statuses;
  });
  assert.deepEqual(Object.values(forbidden), [403, 403, 403, 403, 403], JSON.stringify(forbidden));
  assert.deepEqual(errors, []);
  console.log('decided');

  // New requests show up live (server-sent events), without a reload; both approved at once.
  assert.equal((await lines.next()).value, 'another');
  await item('d.txt').waitFor();
  await item('e.txt').waitFor();
  assert.equal(await page.getByTestId('phone-count').textContent(), '2 approvals waiting');
  await page.getByTestId('phone-approve-all').click();
  await page.getByTestId('phone-approve-all-confirm').click();
  await page.getByText('Nothing is waiting for you.').waitFor();
  console.log('decided again');

  // Revoked on the desktop: the next request is refused (401) and the page asks to pair again.
  assert.equal((await lines.next()).value, 'revoked');
  await page.reload();
  await page.getByTestId('phone-pair-form').waitFor();
  assert.match(await page.getByTestId('phone-error').textContent(), /not paired|revoked/);
  assert.equal(await page.evaluate(() => localStorage.getItem('airlock.phone.token')), null);

  // Wrong codes: five are told so, then every attempt waits (429), even a right-looking one.
  const statuses = [];
  for (let i = 0; i < 6; i++) {
    await page.getByTestId('phone-code-input').fill(`WRONG${i}CODE`);
    const answer = page.waitForResponse((r) => r.url().endsWith('/v1/pair'));
    await page.getByTestId('phone-pair-submit').click();
    statuses.push((await answer).status());
  }
  assert.deepEqual(statuses, [403, 403, 403, 403, 403, 429]);
  assert.match(await page.getByTestId('phone-error').textContent(), /too many/);
  await page.screenshot({ path: join(out, 'phone-rate-limited.png') });
  console.log('done');
} finally {
  stdin.close();
  await browser.close();
}
