import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { SignJWT, generateKeyPair, importJWK, type JWK } from 'jose';
import { beforeAll, describe, expect, it, inject } from 'vitest';
import { authorizerClaims } from '../../scripts/lib/local-stack.ts';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { Api, expectError, newTenant, type TenantFixture } from '../support/api.ts';

const url = () => inject('apiUrl');

describe('public routes', () => {
  it('serves the OpenAPI document, the JWKS and the discovery document without a token', async () => {
    const anon = new Api(undefined);
    const doc = await anon.get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(doc.body).toEqual(JSON.parse(readFileSync('docs/openapi.json', 'utf8')));
    const disco = await anon.get('/.well-known/openid-configuration');
    expect(disco.body.issuer).toBe(inject('issuerUrl'));
    expect(disco.body.jwks_uri).toBe(`${inject('issuerUrl')}/.well-known/jwks.json`);
    const jwks = await anon.get('/.well-known/jwks.json');
    expect(jwks.body.keys).toHaveLength(1);
    expect(jwks.body.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256' });
    expect(jwks.body.keys[0].d).toBeUndefined(); // never the private half
  });

  it('answers unknown routes as API Gateway does', async () => {
    const res = await new Api(undefined).get('/rest/v2/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Not Found' });
  });
});

describe('local stack as API Gateway', () => {
  it('hands the claims over as the HTTP API JWT authorizer does: every value a string', () => {
    expect(authorizerClaims({ tenant_uuid: 't', exp: 1700000000, email_verified: true, groups: ['a', 'b'], addr: { c: 'x' } })).toEqual({
      tenant_uuid: 't',
      exp: '1700000000',
      email_verified: 'true',
      groups: '[a b]',
      addr: '{"c":"x"}',
    });
  });

  it('passes a path segment that is not valid percent-encoding to the handler (404), not a 500', async () => {
    const t = await newTenant();
    expectError(await t.admin.get('/rest/v2/users/%E0%A4%A'), 404, 'not_found');
  });
});

describe('operator commands', () => {
  it('refuses a bad --ttl before creating a tenant or signing a token', async () => {
    await expect(runAdmin(['create-tenant', '--name', 'Bad ttl', '--admin-email', 'a@example.test', '--ttl', 'soon'])).rejects.toThrow(
      /--ttl/,
    );
    await expect(runAdmin(['create-tenant', '--name', 'Bad ttl', '--admin-email', 'a@example.test', '--ttl', '-5'])).rejects.toThrow(
      /--ttl/,
    );
    await expect(runAdmin(['issue-token', '--tenant', randomUUID(), '--user', randomUUID(), '--ttl', '0'])).rejects.toThrow(/--ttl/);
  });
});

describe('JWT authorizer behaviour', () => {
  let t: TenantFixture;
  let key: Awaited<ReturnType<typeof importJWK>>;
  let kid: string;
  beforeAll(async () => {
    t = await newTenant();
    const jwk = JSON.parse(readFileSync(join(inject('dataDir'), 'issuer-key.json'), 'utf8')) as JWK;
    key = await importJWK(jwk, 'RS256');
    kid = jwk.kid!;
  });

  const sign = (
    claims: Record<string, unknown>,
    opts: { iss?: string; aud?: string; exp?: number; nbf?: number } = {},
    signingKey = key,
    alg = 'RS256',
    k = kid,
  ) => {
    const jwt = new SignJWT({ tenant_uuid: t.tenantUuid, user_uuid: t.adminUuid, scope: 'directory:read', ...claims })
      .setProtectedHeader({ alg, kid: k })
      .setIssuer(opts.iss ?? inject('issuerUrl'))
      .setAudience(opts.aud ?? 'goal-tracking-api')
      .setIssuedAt()
      .setExpirationTime(opts.exp ?? Math.floor(Date.now() / 1000) + 600);
    if (opts.nbf) jwt.setNotBefore(opts.nbf);
    return jwt.sign(signingKey);
  };

  const expectGatewayRefusal = async (token: string) => {
    const res = await new Api(token).get('/rest/v2/users');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: 'Unauthorized' });
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  };

  it('accepts a well-formed token of the issuer, with or without the Bearer prefix (the identity source may be the token alone)', async () => {
    const token = await sign({});
    expect((await new Api(token).get('/rest/v2/users')).status).toBe(200);
    expect((await fetch(`${url()}/rest/v2/users`, { headers: { authorization: token } })).status).toBe(200);
    // an external issuer may spell the uuids in upper case: the same tenant and user
    const upper = await new Api(await sign({ tenant_uuid: t.tenantUuid.toUpperCase(), user_uuid: t.adminUuid.toUpperCase() })).get(
      '/rest/v2/users',
    );
    expect(upper.status).toBe(200);
    expect(upper.body.data.records.map((u: { uuid: string }) => u.uuid)).toContain(t.adminUuid);
  });

  it('refuses wrong issuer, wrong audience, expired, not-yet-valid, alg none, foreign keys and garbage', async () => {
    await expectGatewayRefusal(await sign({}, { iss: 'https://evil.example' }));
    await expectGatewayRefusal(await sign({}, { aud: 'someone-else' }));
    await expectGatewayRefusal(await sign({}, { exp: Math.floor(Date.now() / 1000) - 120 }));
    await expectGatewayRefusal(await sign({}, { nbf: Math.floor(Date.now() / 1000) + 3600 }));
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(
      JSON.stringify({
        tenant_uuid: t.tenantUuid,
        user_uuid: t.adminUuid,
        iss: inject('issuerUrl'),
        aud: 'goal-tracking-api',
        exp: Math.floor(Date.now() / 1000) + 600,
      }),
    ).toString('base64url');
    await expectGatewayRefusal(`${header}.${payload}.`);
    const foreignRs = await generateKeyPair('RS256');
    await expectGatewayRefusal(await sign({}, {}, foreignRs.privateKey));
    // the same claims signed HS256 with the public key as secret (algorithm confusion) are refused
    const hs = new TextEncoder().encode(JSON.stringify((await new Api(undefined).get('/.well-known/jwks.json')).body.keys[0]));
    await expectGatewayRefusal(await sign({}, {}, hs, 'HS256'));
    await expectGatewayRefusal('not-a-jwt');
    // issued in the future, or without a kid: API Gateway refuses both
    const future = await new SignJWT({ tenant_uuid: t.tenantUuid, user_uuid: t.adminUuid })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer(inject('issuerUrl'))
      .setAudience('goal-tracking-api')
      .setIssuedAt(Math.floor(Date.now() / 1000) + 600)
      .setExpirationTime('2h')
      .sign(key);
    await expectGatewayRefusal(future);
    const noKid = await new SignJWT({ tenant_uuid: t.tenantUuid, user_uuid: t.adminUuid })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer(inject('issuerUrl'))
      .setAudience('goal-tracking-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(key);
    await expectGatewayRefusal(noKid);
    // no exp: API Gateway requires one (a token without it would never expire)
    const noExp = await new SignJWT({ tenant_uuid: t.tenantUuid, user_uuid: t.adminUuid })
      .setProtectedHeader({ alg: 'RS256', kid })
      .setIssuer(inject('issuerUrl'))
      .setAudience('goal-tracking-api')
      .setIssuedAt()
      .sign(key);
    await expectGatewayRefusal(noExp);
    const es = await generateKeyPair('ES256');
    await expectGatewayRefusal(await sign({}, {}, es.privateKey, 'ES256'));
    const res = await fetch(`${url()}/rest/v2/users`, { headers: { authorization: 'Basic abc' } });
    expect(res.status).toBe(401);
  });

  it('refuses a valid token whose user is unknown in the tenant, or whose tenant does not exist, in the contract shape', async () => {
    expectError(await new Api(await sign({ user_uuid: randomUUID() })).get('/rest/v2/users'), 401, 'unauthorized');
    expectError(await new Api(await sign({ tenant_uuid: randomUUID() })).get('/rest/v2/users'), 401, 'unauthorized');
    expectError(await new Api(await sign({ tenant_uuid: undefined })).get('/rest/v2/users'), 401, 'unauthorized');
    expectError(await new Api(await sign({ tenant_uuid: '*' })).get('/rest/v2/users'), 401, 'unauthorized');
  });

  it('puts the same request id in the error body and the response header', async () => {
    const res = await new Api(await sign({ user_uuid: randomUUID() })).get('/rest/v2/users');
    expect(res.body.error.request_id).toBe(res.headers.get('x-request-id'));
    expect(res.body.error.request_id).toBe(res.headers.get('apigw-requestid'));
  });

  it('refuses unknown query parameters, bad paging values, unknown filters; clamps per_page', async () => {
    expectError(await t.admin.get('/rest/v2/users?page=abc'), 400, 'bad_request');
    expectError(await t.admin.get('/rest/v2/users?per_page=-1'), 400, 'bad_request');
    expectError(await t.admin.get('/rest/v2/users?q[shoe_size_eq]=9'), 400, 'bad_request');
    expectError(await t.admin.get('/rest/v2/users?q[display_name_sounds_like]=x'), 400, 'bad_request');
    const big = await t.admin.get('/rest/v2/users?per_page=100000');
    expect(big.status).toBe(200);
    expect(big.body.data.pagy.per_page).toBe(100);
  });
});
