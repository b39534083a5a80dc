import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { configuredIssuer } from '#shared/auth/issuer.ts';
import { SCOPES } from '#shared/auth/scopes.ts';
import { routes, type Route } from '#shared/routes/index.ts';
import { newTenant, type TenantFixture } from '../support/api.ts';

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

  const call = async (r: Route, token: string) => {
    const path = r.path.replace(/\{\w+\}/g, () => randomUUID());
    // MCP takes a JSON-RPC message and says which answers it accepts (its transport's 406 otherwise)
    const mcp = r.path === '/mcp';
    const body =
      r.method === 'GET' || r.method === 'DELETE'
        ? undefined
        : mcp
          ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
          : '{}';
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
  };

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
