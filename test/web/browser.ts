/**
 * Real headless Chromium for the web chat's tests: Debian's `chromium` driven by playwright-core
 * (which downloads no browser), a fresh profile per launch, and a screenshot of the page written
 * to `test-results/web/` whenever a test fails.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const chromiumPath = process.env.KEEL_CHROMIUM_PATH ?? '/usr/bin/chromium';
export const screenshotsDir = path.join(process.cwd(), 'test-results', 'web');

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface TestBrowser {
  context: BrowserContext;
  /** Requests the pages made to anywhere but `origin` (each was refused). */
  elsewhere: string[];
  close(): Promise<void>;
}

/** Chromium with a fresh profile; any request that leaves `origin` is refused and recorded. */
export async function launchBrowser(origin: string): Promise<TestBrowser> {
  if (!existsSync(chromiumPath))
    throw new Error(
      `the web chat's browser tests need Chromium at ${chromiumPath}: install it with ` +
        '`apt-get install -y chromium` (.ci/run does), or point KEEL_CHROMIUM_PATH at one',
    );
  const profile = await mkdtemp(path.join(tmpdir(), 'keel-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: chromiumArgs,
    viewport: { width: 1100, height: 760 },
  });
  const elsewhere: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  return {
    context,
    elsewhere,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

const fileNameOf = (name: string) =>
  name
    .replace(/[^a-z0-9]+/gi, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);

/** Runs `body` on a new page; on failure writes a screenshot and names it in the error. */
export async function onPage(
  browser: TestBrowser,
  name: string,
  body: (page: Page) => Promise<void>,
): Promise<void> {
  const page = await browser.context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  try {
    await body(page);
  } catch (error) {
    if (consoleErrors.length > 0 && error instanceof Error)
      error.message += `\n(the page's console said: ${consoleErrors.join(' | ')})`;
    await mkdir(screenshotsDir, { recursive: true });
    const file = path.join(screenshotsDir, `${fileNameOf(name)}.png`);
    const saved = await page.screenshot({ path: file, fullPage: true }).then(
      () => true,
      () => false,
    );
    if (saved && error instanceof Error)
      error.message += `\n(screenshot: ${path.relative(process.cwd(), file)})`;
    throw error;
  } finally {
    await page.close().catch(() => undefined);
  }
}
