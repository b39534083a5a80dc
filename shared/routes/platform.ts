import type { Route } from '#shared/routes/types.ts';

/** Public routes: no JWT authorizer. */
export const platformRoutes: Route[] = [
  { method: 'GET', path: '/openapi.json', handler: 'functions/platform/openapi.ts', auth: 'public', table: 'none', doc: { summary: 'This OpenAPI 3.1 document', tag: 'platform', extension: true, success: { status: 200 } } },
  { method: 'GET', path: '/.well-known/jwks.json', handler: 'functions/platform/jwks.ts', auth: 'public', table: 'none', needs: ['kms:public-key'], doc: { summary: 'Public keys of the token issuer', tag: 'platform', extension: true, success: { status: 200 } } },
  { method: 'GET', path: '/.well-known/openid-configuration', handler: 'functions/platform/openid-configuration.ts', auth: 'public', table: 'none', doc: { summary: 'Issuer discovery document', tag: 'platform', extension: true, success: { status: 200 } } },
];
