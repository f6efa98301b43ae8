// The "person" of a remote MCP server's sign-in, for crates/cli/tests/remote_oauth.rs: Debian's
// chromium (playwright-core) opened on the authorization URL Airlock gives as its browser
// (AIRLOCK_BROWSER="node ui/browser/oauth-sign-in.browser.mjs"), following the authorization
// server's redirect to Airlock's loopback listener, until that page says the sign-in is done.
// Writes what the page said to $OAUTH_BROWSER_REPORT (the test reads it).
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const url = process.argv[process.argv.length - 1];
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox'],
});
let said;
try {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 30_000 });
  said = `${page.url()}\n${await page.locator('p').innerText({ timeout: 30_000 })}`;
} catch (error) {
  said = `error: ${error}`;
} finally {
  await browser.close();
}
if (process.env.OAUTH_BROWSER_REPORT) writeFileSync(process.env.OAUTH_BROWSER_REPORT, said);
