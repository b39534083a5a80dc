import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { configuredIssuer } from '#shared/auth/issuer.ts';
import { GRANTABLE_SCOPES, SCOPES } from '#shared/auth/scopes.ts';
import { routes, type Route } from '#shared/routes/index.ts';
import { Api, newTenant, type TenantFixture } from '../support/api.ts';

/**
 * Generated from the route table (contract section 17): for every authenticated row, the admin's token without the
 * row's scope is refused 403 insufficient_scope with RFC 6750's header, and one holding only that scope passes the
 * scope gate (whatever the request then answers: 404 for the made-up uuids, 400/422 for the empty body). A row
 * without a scope fails here, so a new route cannot ship unscoped.
 */
describe('every route checks its scope', () => {
  let t: TenantFixture;
  const tokens = new Map<string, string>();
  const tokenWith = async (scopes: string[]) => {
    const key = scopes.join(' ');
    if (!tokens.has(key)) {
      const issuer = await configuredIssuer();
      tokens.set(key, (await issuer.sign({ tenantId: t.tenantUuid, userId: t.adminUuid, ttlSeconds: 600, scope: key })).token);
    }
    return tokens.get(key)!;
  };
  beforeAll(async () => {
    t = await newTenant();
  });

  const rows = routes.filter((r) => r.auth === 'jwt');
  it.each(rows.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (name, r) => {
    expect(r.scope, `${name} names no scope in its row`).toBeDefined();
    const without = await call(r, await tokenWith(SCOPES.filter((s) => s !== r.scope)));
    expect(without).toEqual({
      status: 403,
      code: r.path.startsWith('/scim/') ? 'scim 403' : 'insufficient_scope',
      challenge: `Bearer error="insufficient_scope", scope="${r.scope}"`,
    });
    const only = await call(r, await tokenWith([r.scope!]));
    expect(only.code, `${name} with only ${r.scope}: ${JSON.stringify(only)}`).not.toBe('insufficient_scope');
    expect(only.challenge ?? '', `${name} with only ${r.scope}`).not.toContain('insufficient_scope');
    expect(only.status).not.toBe(401);
    expect(only.status).toBeLessThan(500);
  });
});

/**
 * Generated from the route table too (contract section 19): a service account's token acts with the account as it is
 * now. For every row a service account may be granted, a token that claims every grantable scope, of an account
 * narrowed afterwards to all but the row's, is refused 403 insufficient_scope by the function (deployed, the
 * gateway's authorizer, which sees the claim only, lets it through); a token of an account still holding every
 * scope passes the scope gate. `/mcp` is left out here: its handler reports a refused caller's 403 as each tool
 * call's result (shared/mcp/handler.ts), while initialize and tools/list still answer.
 */
describe('every route checks a service token`s scope against the account as it is now', () => {
  let t: TenantFixture;
  let full: string;
  const narrowed = new Map<string, string>();
  /** A service account holding every grantable scope, and a token claiming them all. */
  const account = async () => {
    const a = (await t.admin.post('/service_accounts', { name: `all ${randomUUID().slice(0, 8)}`, scopes: GRANTABLE_SCOPES })).body.data
      .record;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: a.client_id, client_secret: a.client_secret });
    const res = await new Api(undefined).request('POST', '/oauth/token', form.toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(res.body.scope).toBe(GRANTABLE_SCOPES.join(' '));
    return { uuid: a.uuid as string, token: res.body.access_token as string };
  };
  beforeAll(async () => {
    t = await newTenant();
    full = (await account()).token;
    for (const scope of GRANTABLE_SCOPES) {
      const a = await account();
      const put = await t.admin.put(`/service_accounts/${a.uuid}`, { scopes: GRANTABLE_SCOPES.filter((s) => s !== scope) });
      expect(put.status).toBe(200);
      narrowed.set(scope, a.token);
    }
  });

  const rows = routes.filter((r) => r.auth === 'jwt' && r.scope !== 'service_accounts' && r.path !== '/mcp');
  it.each(rows.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', async (name, r) => {
    const without = await call(r, narrowed.get(r.scope!)!);
    expect(without, name).toEqual({
      status: 403,
      code: r.path.startsWith('/scim/') ? 'scim 403' : 'insufficient_scope',
      challenge: `Bearer error="insufficient_scope", scope="${r.scope}"`,
    });
    const held = await call(r, full);
    expect(held.code, `${name} with every scope: ${JSON.stringify(held)}`).not.toBe('insufficient_scope');
    expect(held.challenge ?? '', name).not.toContain('insufficient_scope');
    expect(held.status).not.toBe(401);
    expect(held.status).toBeLessThan(500);
  });
});

/** One request to the row's path (made-up uuids for its parameters) with `token`: its status, error code and challenge. */
async function call(r: Route, token: string) {
  const path = r.path.replace(/\{\w+\}/g, () => randomUUID());
  // MCP takes a JSON-RPC message and says which answers it accepts (its transport's 406 otherwise)
  const mcp = r.path === '/mcp';
  const body =
    r.method === 'GET' || r.method === 'DELETE' ? undefined : mcp ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) : '{}';
  const res = await fetch(`${process.env.ISSUER_URL}${path}`, {
    method: r.method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(mcp ? { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body,
  });
  const text = await res.text();
  let code: string | undefined;
  try {
    const json = JSON.parse(text);
    // SCIM answers its own error shape (RFC 7644 3.12): its status stands for the code
    code = r.path.startsWith('/scim/') ? (json?.schemas?.[0]?.endsWith(':Error') ? `scim ${json.status}` : undefined) : json?.error?.code;
  } catch {
    code = undefined; // an SVG, or API Gateway's own body
  }
  return { status: res.status, code, challenge: res.headers.get('www-authenticate') };
}
