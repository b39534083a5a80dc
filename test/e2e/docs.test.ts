import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { SCALAR_VERSION } from '#shared/docs/api-reference.ts';
import { SCALAR_BUNDLE } from '#shared/docs/scalar-bundle.ts';
import { launchChromium } from '../support/chromium.ts';

const url = () => inject('apiUrl');
/** Kept in the repository (README); rewritten when missing or with UPDATE_SCREENSHOTS=1, as it differs by a pixel run to run. */
const SCREENSHOT = 'docs/api-reference.png';

describe('GET /docs: the API reference page', () => {
  it('is HTML that loads the script and the document from the service itself, under a strict CSP', async () => {
    const res = await fetch(`${url()}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    const html = await res.text();
    expect(html).toContain(`<script src="docs/scalar.js?v=${SCALAR_VERSION}"></script>`);
    expect(html).toContain('data-url="openapi.json"');
    expect(html).not.toMatch(/https?:\/\//); // no CDN, no font service: every URL is relative to the service
  });

  it('serves the script gzipped when accepted, plain otherwise, cached for a year', async () => {
    const bundle = readFileSync(SCALAR_BUNDLE);
    // fetch() would decompress by itself: read the raw bytes with node's http client instead.
    const raw = async (acceptEncoding: string) => {
      const { request } = await import('node:http');
      return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
        request(`${url()}/docs/scalar.js?v=${SCALAR_VERSION}`, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        })
          .on('error', reject)
          .end();
      });
    };
    const gzipped = await raw('gzip, deflate, br');
    expect(gzipped.status).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(gzipped.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(gzipped.body.length).toBeLessThan(bundle.length / 2);
    expect(gunzipSync(gzipped.body).equals(bundle)).toBe(true);
    for (const acceptEncoding of ['identity', 'gzip;q=0, br']) {
      const plain = await raw(acceptEncoding);
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.body.equals(bundle)).toBe(true);
    }
  });

  describe('in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await launchChromium();
    }, 900_000); // installs Debian's chromium on first use

    afterAll(async () => {
      await browser?.close();
    });

    it('renders the goal endpoints from /openapi.json with nothing fetched from elsewhere, and is kept as a screenshot', async () => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const requests: string[] = [];
      const errors: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('console', (m) => m.type() === 'error' && errors.push(m.text())); // CSP violations land here too
      page.on('pageerror', (e) => errors.push(e.message));

      await page.goto(`${url()}/docs`);
      await page.getByText('Goal-tracking API').first().waitFor({ timeout: 90_000 });
      for (const tag of ['objectives', 'key_results', 'initiatives', 'checkins'])
        await expect(page.getByRole('button', { name: tag }).first().isVisible()).resolves.toBe(true);
      await page.getByRole('button', { name: 'objectives' }).first().click();
      for (const summary of ['Create an objective (admins and members)', 'List objectives the caller can see', 'Archive an objective']) {
        await page.getByText(summary).first().waitFor({ timeout: 30_000 });
      }
      await expect(page.getByText('/rest/v2/objectives/{id}/archive').first().isVisible()).resolves.toBe(true);

      expect(errors).toEqual([]);
      expect(requests.map((r) => new URL(r).origin).filter((o) => o !== url())).toEqual([]); // no CDN, fonts, telemetry
      expect(requests.map((r) => new URL(r).pathname)).toEqual(expect.arrayContaining(['/docs', '/docs/scalar.js', '/openapi.json']));

      const png = await page.screenshot();
      expect(png.length).toBeGreaterThan(30_000); // a rendered page, not a blank one
      if (!existsSync(SCREENSHOT) || process.env.UPDATE_SCREENSHOTS === '1') {
        mkdirSync('docs', { recursive: true });
        writeFileSync(SCREENSHOT, png);
      }
    }, 180_000);
  });
});
