import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's `chromium`, installed with apt when missing (about 30 s, as root): browsers that npm packages
 * download for themselves cannot be fetched on these machines.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (as root)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update'], { env, stdio: 'ignore', timeout: 300_000 });
  execFileSync('apt-get', ['install', '-y', 'chromium'], { env, stdio: 'ignore', timeout: 600_000 });
  if (!existsSync(CHROMIUM)) throw new Error('apt-get install chromium did not install /usr/bin/chromium');
  return CHROMIUM;
}

/** Headless Chromium with nothing running in the background (Playwright starts it on a new, empty profile). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
