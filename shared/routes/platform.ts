import { SCALAR_BUNDLE } from '#shared/docs/scalar-bundle.ts';
import type { Route } from '#shared/routes/types.ts';

/** Public routes: no JWT authorizer. */
export const platformRoutes: Route[] = [
  {
    method: 'GET',
    path: '/openapi.json',
    handler: 'functions/platform/openapi.ts',
    auth: 'public',
    door: 'public',
    table: 'none',
    doc: { summary: 'This OpenAPI 3.1 document', tag: 'platform', extension: true, success: { status: 200 } },
  },
  {
    method: 'GET',
    path: '/.well-known/jwks.json',
    handler: 'functions/platform/jwks.ts',
    auth: 'public',
    door: 'public',
    table: 'none',
    needs: ['kms:public-key'],
    doc: { summary: 'Public keys of the token issuer', tag: 'platform', extension: true, success: { status: 200 } },
  },
  {
    method: 'GET',
    path: '/.well-known/openid-configuration',
    handler: 'functions/platform/openid-configuration.ts',
    auth: 'public',
    door: 'public',
    table: 'none',
    doc: { summary: 'Issuer discovery document', tag: 'platform', extension: true, success: { status: 200 } },
  },
  {
    method: 'GET',
    path: '/docs',
    handler: 'functions/platform/docs.ts',
    auth: 'public',
    door: 'public',
    table: 'none',
    doc: {
      summary: 'API reference page (HTML), rendered from /openapi.json',
      tag: 'platform',
      extension: true,
      success: { status: 200, description: 'The HTML page' },
    },
  },
  {
    method: 'GET',
    path: '/docs/scalar.js',
    handler: 'functions/platform/docs-script.ts',
    auth: 'public',
    door: 'public',
    table: 'none',
    bundleFiles: [SCALAR_BUNDLE],
    doc: {
      summary: "Script of the API reference page (Scalar's standalone bundle)",
      tag: 'platform',
      extension: true,
      success: { status: 200, description: 'The JavaScript bundle' },
    },
  },
];
