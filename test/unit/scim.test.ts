import { afterAll, describe, expect, it } from 'vitest';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { ListResult } from '#shared/list/engine.ts';
import { buildOpenApiDocument } from '#shared/openapi.ts';
import { routes } from '#shared/routes/index.ts';
import { newUserRecord } from '#shared/domain/users/entity.ts';
import { validateBody } from '#shared/http/api.ts';
import { ScimGroupBody, ScimPatchBody, ScimUserBody } from '#shared/schemas/bodies/scim.ts';
import { PROTOTYPE_KEY } from '#shared/schemas/json-input.ts';
import { scimError, type ScimRefusal } from '#shared/scim/errors.ts';
import { toScimAnswer } from '#shared/scim/answer.ts';
import { walk } from '#shared/scim/lists.ts';
import { NAME_MAX, NAME_TOO_LONG, OPERATIONS_MAX } from '#shared/scim/limits.ts';
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

  // Each of these, given to scim-patch, wrote into Object.prototype or onto a built-in function every request of
  // the process shares (checked when this test was written: scim-patch walks each part of a path and of a key)
  const hostile: Array<[string, { op: string; path?: string; value?: unknown }, () => unknown]> = [
    ['a dotted key', { op: 'add', value: { '__proto__.x': 1 } }, () => ({}) as Record<string, unknown>],
    ['constructor.prototype in a key', { op: 'add', value: { 'constructor.prototype.x': 1 } }, () => ({}) as Record<string, unknown>],
    ['a URN-prefixed key', { op: 'add', value: { 'urn:x:__proto__.x': 1 } }, () => ({}) as Record<string, unknown>],
    ['a URN that is a prototype name', { op: 'add', value: { '__proto__:x': 1 } }, () => ({}) as Record<string, unknown>],
    ['a key under a path', { op: 'replace', path: 'name', value: { '__proto__.x': 1 } }, () => ({}) as Record<string, unknown>],
    ['a path under a filter', { op: 'add', path: 'emails[type eq "work"].__proto__.x', value: 1 }, () => ({}) as Record<string, unknown>],
    ['a filtered prototype', { op: 'add', path: '__proto__[x eq 1]', value: 1 }, () => ({}) as Record<string, unknown>],
    ['a URN-prefixed path', { op: 'add', path: 'urn:x:constructor.prototype.x', value: 1 }, () => ({}) as Record<string, unknown>],
    ['an inherited method in a key', { op: 'add', value: { 'hasOwnProperty.x': 1 } }, () => Object.prototype.hasOwnProperty],
    ['a string method in a path', { op: 'add', path: 'displayName.trim.x', value: 1 }, () => String.prototype.trim],
    ['an array method in a key', { op: 'add', value: { 'emails.push.x': 1 } }, () => Array.prototype.push],
    ['a boolean method in a path', { op: 'replace', path: 'active.valueOf.x', value: 1 }, () => Boolean.prototype.valueOf],
    ['a method in a path', { op: 'add', path: 'name.toString.x', value: 1 }, () => Object.prototype.toString],
    ['an array length in a key', { op: 'add', value: { 'emails.length': 'x' } }, () => user.emails],
    [
      'a prototype name deep in a value',
      { op: 'add', value: { name: { a: [{ 'b.prototype': 1 }] } } },
      () => ({}) as Record<string, unknown>,
    ],
  ];
  it.each(hostile)('refuses %s with 400 invalidPath, before scim-patch reaches anything shared', (_what, op, target) => {
    const err = refusalOf(() => applyPatch(user, [{ op: 'replace', path: 'displayName', value: 'B' }, op]));
    expect(err).toMatchObject({ status: 400, code: 'scim:invalidPath' });
    expect(err.message).toMatch(/names (__proto__|constructor|prototype|hasOwnProperty|trim|push|valueOf|toString|length),/);
    expect((target() as Record<string, unknown>).x).toBeUndefined();
    expect(user.displayName).toBe('A');
  });

  it('keeps names that only look like prototype names', () => {
    const patched = applyPatch(user, [
      {
        op: 'add',
        value: { 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber': '42', protos: 1, Constructor: 2 },
      },
      { op: 'add', path: 'name.givenName', value: 'Anne' },
      { op: 'replace', path: 'emails[type eq "work"].value', value: 'c@d.test' },
    ]);
    expect(patched).toMatchObject({
      'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User': { employeeNumber: '42' },
      protos: 1,
      Constructor: 2,
      name: { givenName: 'Anne' },
      emails: [{ value: 'c@d.test', type: 'work' }],
    });
  });

  it(`refuses names over ${NAME_MAX} characters (paths, and value keys at any depth) with 400 invalidPath before scim-patch splits them`, () => {
    const long = 'a'.repeat(60_000);
    for (const op of [
      { op: 'add', path: `name.${'b'.repeat(NAME_MAX)}`, value: 1 },
      { op: 'add', value: { [long]: 1 } },
      { op: 'add', value: { [`${'a.'.repeat(30_000)}b`]: 1 } }, // short parts, a long name: the regex's cost is the name's
      { op: 'add', value: { name: { [long]: 1 } } },
      { op: 'add', value: [{ [long]: 1 }] },
    ]) {
      const err = refusalOf(() => applyPatch(user, [op]));
      expect(err).toMatchObject({ status: 400, code: 'scim:invalidPath' });
      expect(err.message).toContain(`at most ${NAME_MAX} characters`);
    }
    expect(applyPatch(user, [{ op: 'add', value: { ['c'.repeat(NAME_MAX)]: 1 } }])['c'.repeat(NAME_MAX)]).toBe(1);
  });

  it(`refuses more than ${OPERATIONS_MAX} operations with 400 invalidValue, as the body schema does`, () => {
    const op = { op: 'replace', path: 'displayName', value: 'Many' };
    expect(refusalOf(() => applyPatch(user, Array(OPERATIONS_MAX + 1).fill(op)))).toMatchObject({ status: 400, code: 'scim:invalidValue' });
    expect(applyPatch(user, Array(OPERATIONS_MAX).fill(op)).displayName).toBe('Many');
    expect(() => validateBody(ScimPatchBody, { schemas: [], Operations: Array(OPERATIONS_MAX + 1).fill(op) })).toThrow();
  });

  it('answers a value nested past the stack with 400 invalidValue, not an internal error', () => {
    // scim-patch compares an added value with what is there by a recursive deep equality; the body read refuses
    // nesting long before that overflows, and this holds if it ever did not
    const deep = () => {
      let v: unknown = 1;
      for (let i = 0; i < 100_000; i++) v = [v];
      return v;
    };
    const ops = [
      { op: 'replace', path: 'x', value: [deep()] },
      { op: 'add', path: 'x', value: [deep()] },
    ];
    expect(refusalOf(() => applyPatch({ ...user, x: [] }, ops))).toMatchObject({ status: 400, code: 'scim:invalidValue' });
  });

  it('keeps scim-patch refusals as 400 with their scimType', () => {
    const err = refusalOf(() => applyPatch(user, [{ op: 'remove' }]));
    expect(err.status).toBe(400);
    expect(err.code).toMatch(/^scim:/);
  });

  it(`refuses a key over ${NAME_MAX} characters anywhere in a SCIM body, naming it cut short, answered as invalidPath`, () => {
    const long = 'k'.repeat(NAME_MAX + 1);
    for (const [schema, body, field] of [
      [ScimUserBody, { userName: 'a@b.test', [long]: 1 }, `${'k'.repeat(40)}…`],
      [ScimUserBody, { userName: 'a@b.test', name: { givenName: 'A', [long]: 1 } }, `name.${'k'.repeat(40)}…`],
      [
        ScimGroupBody,
        { displayName: 'G', members: [{ value: '00000000-0000-4000-8000-000000000000', [long]: 1 }] },
        `members.0.${'k'.repeat(40)}…`,
      ],
      [
        ScimPatchBody,
        { schemas: [], Operations: [{ op: 'add', value: { a: [{ [long]: 1 }] } }] },
        `Operations.0.value.a.0.${'k'.repeat(40)}…`,
      ],
    ] as const) {
      let err: { details: Array<{ field?: string; code: string; message: string }>; status: number; code: string } | undefined;
      try {
        validateBody(schema, body);
      } catch (e) {
        err = e as typeof err;
      }
      expect(err?.details).toEqual([
        { field, code: NAME_TOO_LONG, message: `an attribute name is ${NAME_MAX + 1} characters long: at most ${NAME_MAX} characters` },
      ]);
      expect(scimError(err!.status, err!.code, 'x', err!.details)).toMatchObject({ httpStatus: 400, scimType: 'invalidPath' });
    }
    expect(validateBody(ScimUserBody, { userName: 'a@b.test', ['k'.repeat(NAME_MAX)]: 1 })).toHaveProperty('k'.repeat(NAME_MAX));
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
    // a body key named after a prototype (refused by the body read) is a name no attribute may have
    expect(scimError(400, 'bad_request', 'x', [{ field: 'name.__proto__', code: PROTOTYPE_KEY, message: 'm' }])).toMatchObject({
      httpStatus: 400,
      scimType: 'invalidPath',
      detail: 'x; name.__proto__: m',
    });
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
