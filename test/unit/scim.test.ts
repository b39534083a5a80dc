import { afterAll, describe, expect, it } from 'vitest';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { ListResult } from '#shared/list/engine.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes/index.ts';
import { newUserRecord } from '#shared/domain/users/entity.ts';
import { validateBody } from '#shared/http/api.ts';
import { ScimPatchBody, ScimUserBody } from '#shared/schemas/bodies/scim.ts';
import { scimError, type ScimRefusal } from '#shared/scim/errors.ts';
import { toScimAnswer } from '#shared/scim/handler.ts';
import { walk } from '#shared/scim/lists.ts';
import { applyPatch } from '#shared/scim/patch.ts';
import { compare, listQuery, parseScimFilter } from '#shared/scim/query.ts';
import { projectAttributes, toScimUser, USER_URN } from '#shared/scim/resources.ts';

const ATTRS = ['userName', 'externalId', 'displayName'] as const;

// meta.location is absolute, from the configured base URL (shared/config.ts); set before the suites below are collected
const savedBase = process.env.API_BASE_URL;
process.env.API_BASE_URL = 'https://api.example.test';
afterAll(() => {
  if (savedBase === undefined) delete process.env.API_BASE_URL;
  else process.env.API_BASE_URL = savedBase;
});
const refusalOf = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err as ScimRefusal;
  }
  throw new Error('did not refuse');
};

describe('SCIM filters', () => {
  it('reads one eq, co or sw on the named attributes, in any letter case or after the schema URN', () => {
    expect(parseScimFilter('userName eq "a@b.test"', USER_URN, ATTRS)).toEqual({ attr: 'userName', op: 'eq', value: 'a@b.test' });
    expect(parseScimFilter('DISPLAYNAME co "x"', USER_URN, ATTRS)).toEqual({ attr: 'displayName', op: 'co', value: 'x' });
    expect(parseScimFilter(`${USER_URN}:externalId sw "0a"`, USER_URN, ATTRS)).toEqual({ attr: 'externalId', op: 'sw', value: '0a' });
  });

  it('refuses every other filter with 400 invalidFilter', () => {
    for (const f of [
      'userName ne "x"',
      'userName pr',
      'title eq "x"',
      'userName eq "a" and displayName eq "b"',
      'userName gt "a"',
      'userName eq 1',
      '(',
      '',
    ]) {
      const err = refusalOf(() => parseScimFilter(f, USER_URN, ATTRS));
      expect([err.status, err.code], f).toEqual([400, 'scim:invalidFilter']);
    }
  });

  it('compares case-insensitively unless the attribute is case-exact', () => {
    expect(compare('Ada@Example.test', { attr: 'userName', op: 'eq', value: 'ada@example.TEST' }, false)).toBe(true);
    expect(compare('Abc', { attr: 'externalId', op: 'eq', value: 'abc' }, true)).toBe(false);
    expect(compare('Abc', { attr: 'externalId', op: 'sw', value: 'Ab' }, true)).toBe(true);
    expect(compare(null, { attr: 'externalId', op: 'co', value: '' }, true)).toBe(false);
  });

  it('pages from startIndex (below 1 is 1) with count clamped to 0..100', () => {
    expect(listQuery([]).page).toEqual({ startIndex: 1, count: 100 });
    expect(
      listQuery([
        ['StartIndex', '-3'],
        ['COUNT', '1000'],
      ]).page,
    ).toEqual({ startIndex: 1, count: 100 });
    expect(listQuery([['count', '-1']]).page.count).toBe(0);
    expect(refusalOf(() => listQuery([['startIndex', '1.5']])).code).toBe('scim:invalidValue');
  });
});

describe('SCIM PATCH', () => {
  const user = toScimUser(newUserRecord({ email: 'a@b.test', creator_uuid: null, display_name: 'A' }, '2026-01-01T00:00:00.000Z', 'u1'));

  it('applies Entra ID\'s capitalised ops and "False" strings, read as a boolean by the User body', () => {
    const patched = applyPatch(user, [{ op: 'Replace', path: 'active', value: 'False' }]);
    expect(validateBody(ScimUserBody, patched).active).toBe(false);
    expect(validateBody(ScimUserBody, applyPatch(user, [{ op: 'replace', value: { active: 'TRUE' } }])).active).toBe(true);
  });

  it('refuses unknown ops and prototype names with nothing touched', () => {
    expect(refusalOf(() => applyPatch(user, [{ op: 'move', path: 'active' }])).code).toBe('scim:invalidSyntax');
    for (const op of [
      { op: 'add', path: '__proto__.x', value: 1 },
      { op: 'add', path: 'name', value: { constructor: { prototype: { x: 1 } } } },
    ])
      expect(refusalOf(() => applyPatch(user, [op])).code).toBe('scim:invalidPath');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(user.active).toBe(true);
  });

  it('keeps scim-patch refusals as 400 with their scimType', () => {
    const err = refusalOf(() => applyPatch(user, [{ op: 'remove' }]));
    expect(err.status).toBe(400);
    expect(err.code).toMatch(/^scim:/);
  });

  it('wants at least one operation', () => {
    expect(() => validateBody(ScimPatchBody, { schemas: [], Operations: [] })).toThrow();
  });
});

describe('SCIM answers', () => {
  it("maps the contract's errors to SCIM's: taken 409 uniqueness, rules 400 invalidValue, malformed 400 invalidSyntax", () => {
    expect(scimError(422, 'taken', 'A user with email x already exists', [])).toMatchObject({
      httpStatus: 409,
      scimType: 'uniqueness',
      status: '409',
    });
    expect(scimError(422, 'validation_failed', 'bad', [{ field: 'userName', message: 'not an e-mail' }])).toMatchObject({
      httpStatus: 400,
      scimType: 'invalidValue',
      detail: 'bad; userName: not an e-mail',
    });
    expect(scimError(400, 'bad_request', 'x', [])).toMatchObject({ httpStatus: 400, scimType: 'invalidSyntax' });
    expect(scimError(404, 'not_found', 'User x not found', [])).toEqual({
      httpStatus: 404,
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '404',
      detail: 'User x not found',
    });
  });

  it('dresses any answer as application/scim+json, keeping headers such as Retry-After', () => {
    const res = toScimAnswer({
      statusCode: 429,
      headers: { 'content-type': 'application/json', 'Retry-After': '3' },
      body: JSON.stringify({ error: { status: 429, code: 'rate_limited', message: 'Too many requests', details: [], request_id: 'r' } }),
    });
    expect(res.statusCode).toBe(429);
    expect(res.headers).toMatchObject({ 'content-type': 'application/scim+json', 'Retry-After': '3' });
    expect(JSON.parse(res.body!)).toEqual({
      schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'],
      status: '429',
      detail: 'Too many requests',
    });
    expect(toScimAnswer({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' }).headers).toEqual({
      'content-type': 'application/scim+json',
    });
  });

  it('keeps the attributes asked for, and never drops id and schemas', () => {
    const user = toScimUser(newUserRecord({ email: 'a@b.test', creator_uuid: null }, '2026-01-01T00:00:00.000Z', 'u1'));
    expect(Object.keys(projectAttributes(user, new Map([['attributes', 'userName,name.givenName']]))).sort()).toEqual([
      'id',
      'name',
      'schemas',
      'userName',
    ]);
    expect(projectAttributes(user, new Map([['excludedattributes', 'emails,id']]))).not.toHaveProperty('emails');
    expect(projectAttributes(user, new Map([['excludedattributes', 'emails,id']]))).toHaveProperty('id', 'u1');
  });
});

describe('SCIM lists', () => {
  /** A list as the engine serves it: `page=N` reads the keys of the pages before it, a cursor starts after its key. */
  function fakeList(size: number) {
    const keys = Array.from({ length: size }, (_, i) => `k${String(i).padStart(5, '0')}`);
    const seen = { keys: 0, calls: [] as Array<Array<[string, string]>> };
    const list = async (_ctx: DomainCtx, pairs: Array<[string, string]>): Promise<ListResult<string>> => {
      seen.calls.push(pairs);
      const p = new Map(pairs);
      const perPage = Number(p.get('per_page') ?? 20);
      const from = p.has('cursor') ? keys.indexOf(p.get('cursor')!) + 1 : (Number(p.get('page') ?? 1) - 1) * perPage;
      const read = keys.slice(p.has('cursor') ? from : 0, from + perPage + 1); // one past the page tells `next`
      seen.keys += read.length;
      const records = keys.slice(from, from + perPage);
      const more = from + perPage < keys.length;
      return {
        records,
        pagy: {
          page: Number(p.get('page') ?? 1),
          per_page: perPage,
          offset: 0,
          next: more && !p.has('cursor') ? Number(p.get('page') ?? 1) + 1 : null,
          prev: null,
          next_cursor: more ? records.at(-1)! : null,
        },
        filters: {},
      };
    };
    return { list, seen };
  }

  it('walks a co/sw filter through the whole list once, page after page by cursor, never re-reading earlier pages', async () => {
    const { list, seen } = fakeList(1000);
    const found = await walk({} as DomainCtx, list, (k) => k.endsWith('7'));
    expect(found).toHaveLength(100);
    expect(seen.calls).toHaveLength(10);
    expect(seen.calls.every((c) => !c.some(([k]) => k === 'page' || k === 'offset'))).toBe(true);
    // each key read once, plus the one past each page: linear, where page=N paging read about 5500 keys
    expect(seen.keys).toBeLessThanOrEqual(1000 + 10);
  });
});

describe('SCIM in the OpenAPI document', () => {
  const doc = buildOpenApiDocument() as unknown as {
    paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
  };

  it('documents no 422 on any SCIM operation (a broken rule is 400 invalidValue, RFC 7644 section 3.12), and says so under 400', () => {
    const scim = routes.filter((r) => r.path.startsWith('/scim/'));
    expect(scim.length).toBeGreaterThan(0);
    for (const r of scim) {
      const op = doc.paths[r.path]![r.method.toLowerCase()]!;
      expect(Object.keys(op.responses), `${r.method} ${r.path}`).not.toContain('422');
      expect(op.responses['400']!.description, `${r.method} ${r.path}`).toContain('invalidValue');
    }
    // REST rows keep theirs
    expect(Object.keys(doc.paths['/rest/v2/users']!.post!.responses)).toContain('422');
  });
});
