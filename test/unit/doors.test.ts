import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DOORS, type Door } from '#shared/http/doors.ts';
import { callerStages, doorStages, STAGE_ORDER } from '#shared/http/pipeline.ts';
import { routes } from '#shared/routes/index.ts';

/**
 * Each row's door (shared/routes/types.ts) against what its handler builds, read from the handler's source as
 * test/unit/transport.test.ts reads `accepts`: a handler never loads the route table at cold start, so the row and
 * the handler are compared here. The door table's builder is the one call a handler of that door makes.
 */
const BUILDERS = [...new Set(Object.values(DOORS).map((d) => d.builder))];
const builderCalls = (file: string) => BUILDERS.filter((b) => new RegExp(`\\b${b}(<[^(]*>)?\\(`).test(readFileSync(file, 'utf8')));

describe('doors', () => {
  it("every row's handler calls its door's builder, and no other door's", () => {
    for (const r of routes) {
      const expected = DOORS[r.door].builder;
      expect(builderCalls(r.handler), `${r.method} ${r.path} (${r.handler}) is door ${r.door}`).toEqual([expected]);
    }
  });

  it('a row is jwt exactly when its door proves a token, and the doors it may be are the ones of its auth', () => {
    const byAuth: Record<'jwt' | 'public', Door[]> = { jwt: ['rest', 'scim', 'mcp'], public: ['public', 'push', 'token'] };
    for (const r of routes) expect(byAuth[r.auth], `${r.method} ${r.path}`).toContain(r.door);
    for (const r of routes) expect(r.door === 'scim', `${r.method} ${r.path}`).toBe(r.path.startsWith('/scim/v2/'));
  });

  it('every door is some row', () => {
    expect(new Set(routes.map((r) => r.door))).toEqual(new Set(Object.keys(DOORS)));
  });

  it('a door whose credential or limiter charge is its own refuses to build without that stage', () => {
    expect(() => doorStages('rest', {})).toThrow(/gateway-jwt/);
    expect(() => doorStages('push', callerStages('push'))).toThrow(/push-secret/);
    expect(() => doorStages('mcp', callerStages('mcp'))).toThrow(/per-tool-call/);
    expect(() => doorStages('rest', callerStages('rest'))).not.toThrow();
    expect(() => doorStages('public', {})).not.toThrow();
  });

  it('the stages come in one order at every door, the door table deciding which are there', () => {
    expect(STAGE_ORDER).toEqual([
      'tracer',
      'securityHeaders',
      'errors',
      'headerNormalizer',
      'transport',
      'idempotency',
      'bodyValidation',
      'credential',
      'scopes',
      'pathAndQuery',
      'readAhead',
      'caller',
      'limiter',
      'early',
    ]);
    const names = (door: Door, subs = {}) => doorStages(door, subs).map((s) => s.name ?? '?');
    expect(names('rest', callerStages('rest'))).toEqual([
      expect.anything(),
      expect.anything(),
      'errorsAndLogging',
      expect.anything(),
      'transport',
      'tenantFromClaims',
      'scopeCheck',
      'pathAndQuery',
      'readAhead',
      'caller',
      'rateLimit',
    ]);
    expect(names('public')).toEqual([expect.anything(), 'errorsAndLogging', 'transport']);
    expect(names('token')).toEqual([expect.anything(), 'errorsAndLogging', 'transport']);
  });
});
