import { gzipSync } from 'node:zlib';
import scalarPackage from '../../node_modules/@scalar/api-reference/package.json' with { type: 'json' };
import type { ApiResult } from '#shared/http/api.ts';
import { readBundledFile } from '#shared/docs/bundled-file.ts';
import { SCALAR_BUNDLE } from '#shared/docs/scalar-bundle.ts';

/**
 * GET /docs: Scalar's API reference, rendered in the browser from /openapi.json. Every asset comes from the
 * service itself (the standalone bundle from node_modules, served at /docs/scalar.js): no CDN, no web fonts,
 * no telemetry, and a Content-Security-Policy that lets the page reach nothing but its own origin.
 */
/** The script URL carries Scalar's version, so the script can be cached for a year and a new one is fetched on upgrade. */
export const SCALAR_VERSION: string = scalarPackage.version;

const scalarConfiguration = {
  withDefaultFonts: false, // the default fonts are loaded from Scalar's font CDN
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  metaData: { title: 'Goal-tracking API reference' },
};

const escapeAttribute = (value: string) => value.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');

// Relative URLs: the page works under any base path (a stage or a custom-domain mapping) as well as at the root.
const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Goal-tracking API reference</title>
    <link rel="icon" href="data:," />
  </head>
  <body>
    <noscript>This page needs JavaScript. The API document itself is at <a href="openapi.json">openapi.json</a>.</noscript>
    <script id="api-reference" data-url="openapi.json" data-configuration="${escapeAttribute(JSON.stringify(scalarConfiguration))}"></script>
    <script src="docs/scalar.js?v=${SCALAR_VERSION}"></script>
  </body>
</html>
`;

/** Scalar renders its styles inline; everything else (script, document, images) must come from this origin. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function referencePage(): ApiResult {
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'public, max-age=300',
      'content-security-policy': CONTENT_SECURITY_POLICY,
      'x-content-type-options': 'nosniff',
    },
    body: page,
  };
}

/** `gzip` (or `*`) listed in Accept-Encoding without `q=0`. */
function acceptsGzip(acceptEncoding: string | undefined): boolean {
  return (acceptEncoding ?? '').split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    return (coding === 'gzip' || coding === '*') && !params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
  });
}

let script: { plain: string; gzipped: string } | undefined;

/**
 * The standalone bundle (3.5 MB), gzipped for clients that accept it (about 1 MB): a Lambda response holds
 * at most 6 MB, and the browser downloads a quarter. Read and compressed once per container.
 */
export function referenceScript(acceptEncoding: string | undefined): ApiResult {
  if (!script) {
    const file = readBundledFile(SCALAR_BUNDLE);
    script = { plain: file.toString('utf8'), gzipped: gzipSync(file).toString('base64') };
  }
  const gzip = acceptsGzip(acceptEncoding);
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    },
    body: gzip ? script.gzipped : script.plain,
    isBase64Encoded: gzip,
  };
}
