import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  BURST,
  batchCases,
  type Case,
  failedCredentialCases,
  type Hostile,
  hostileCases,
  hostileFixtures,
  limiterCases,
  pollutionProblem,
  scopeCases,
  scopeTokens,
} from '../support/door-matrix-cases.ts';
import { pool } from '../support/door-matrix-http.ts';
import { type Door, EXEMPT_ROWS, KINDS, MATRIX_ROWS, MCP_TOOLS } from '../support/door-matrix.ts';

/**
 * The door matrix (contract section 19, issue 32): every operation reachable through each door (the REST routes,
 * /mcp's tools, /scim/v2, the push route, the token endpoint) gets the same hostile cases (prototype names, long
 * names, 1 MiB bodies, long numbers), the same limiter charge (one unit per operation; failed credentials spend
 * nothing) and the same scope refusal, each answered in its door's dialect. The cases are generated from the route
 * table and the tool list (test/support/door-matrix.ts); a row the derivation cannot place fails the first test.
 * Each case is one test named `<door> <row or tool> · <kind>: <promise>`, its failure the answer that broke it.
 *
 * The cases of a group run together (a few at a time) in the group's beforeAll; its tests then report each one.
 * The prototype cases run last, door by door, each door followed by a check that another tenant is still served
 * as before: against a stack that lets a key reach Object.prototype they poison the process for everything after.
 */

const base = inject('apiUrl');

/** One describe per group: its cases run in beforeAll (`concurrency` at once), then one test each reports its own. */
function group(title: string, cases: Case[], concurrency: number, setup?: () => Promise<void>) {
  describe(title, () => {
    const results = new Map<string, string | undefined>();
    beforeAll(async () => {
      const started = performance.now();
      await setup?.();
      const out = await pool(
        concurrency,
        cases.map((c) => () => c.run().catch((err: Error) => `the case failed to run: ${err?.stack ?? err}`)),
      );
      cases.forEach((c, i) => results.set(c.name, out[i]));
      const failed = out.filter(Boolean).length;
      console.log(
        `door matrix · ${title}: ${cases.length} cases, ${failed} failed, ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    }, 300_000);
    it.each(cases.map((c) => [c.name]))('%s', (name) => {
      const problem = results.get(name);
      if (problem) throw new Error(`${name}\n  ${problem}`);
    });
  });
}

let hostile: Hostile | undefined;
const fixtures = () =>
  hostile ??
  (() => {
    throw new Error('the hostile fixtures were not made');
  })();
const makeHostile = async () => void (hostile ??= await hostileFixtures(base));

let tokens: Awaited<ReturnType<typeof scopeTokens>> | undefined;

const LIMITER = limiterCases(base);
const FAILED = failedCredentialCases(base);
const SCOPE = scopeCases(base, () => tokens!);
const DOORS: Door[] = ['REST', 'SCIM', 'MCP', 'push', 'token'];
const LONG = DOORS.flatMap((d) => hostileCases(base, fixtures, d, ['long-name', 'query-long-name']));
const BIG = DOORS.flatMap((d) => hostileCases(base, fixtures, d, ['body-1MiB']));
const NUMBERS = DOORS.flatMap((d) => hostileCases(base, fixtures, d, ['number']));
const BATCH = batchCases(base, fixtures);
/** Prototype cases door by door, the door most likely to pollute last (issue 32: SCIM PATCH). */
const PROTO_ORDER: Door[] = ['token', 'push', 'REST', 'MCP', 'SCIM'];
const PROTO = new Map(PROTO_ORDER.map((d) => [d, hostileCases(base, fixtures, d, ['prototype', 'query-prototype'])]));
const ALL = [...LIMITER, ...FAILED, ...SCOPE, ...LONG, ...BIG, ...NUMBERS, ...BATCH, ...[...PROTO.values()].flat()];

describe('the door matrix covers the route table', () => {
  it('places every row in a door, or exempts it with a reason', () => {
    const unplaced = MATRIX_ROWS.filter((m) => !m.door && !EXEMPT_ROWS[m.key]).map((m) => m.key);
    expect(unplaced, 'rows with no door case: give them a door in test/support/door-matrix.ts or exempt them with a reason').toEqual([]);
    const placedAndExempt = MATRIX_ROWS.filter((m) => m.door && EXEMPT_ROWS[m.key]).map((m) => m.key);
    expect(placedAndExempt, 'exempt rows that are doors').toEqual([]);
    const stale = Object.keys(EXEMPT_ROWS).filter((k) => !MATRIX_ROWS.some((m) => m.key === k));
    expect(stale, 'exemptions of rows the route table no longer has').toEqual([]);
  });

  it('gives every row of a door every kind of case, or a reason for each one it lacks', () => {
    const missing: string[] = [];
    for (const m of MATRIX_ROWS) {
      if (!m.door) continue;
      if (!m.plan) {
        missing.push(`${m.key}: no plan`);
        continue;
      }
      const ops = m.door === 'MCP' ? MCP_TOOLS.map((t) => `tools/call ${t.name}`) : [m.key];
      for (const kind of KINDS) {
        const planned = m.plan[kind];
        if (planned !== true) {
          if (typeof planned !== 'string' || !planned.trim()) missing.push(`${m.key} · ${kind}: neither cases nor a reason`);
          continue;
        }
        for (const op of ops)
          if (!ALL.some((c) => c.door === m.door && c.op === op && c.kind === kind))
            missing.push(`${m.door} ${op} · ${kind}: planned, no case`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('checks the door-level promises at every door: failed credentials spend nothing; /mcp takes one message a POST', () => {
    expect(new Set(FAILED.map((c) => c.door))).toEqual(new Set(DOORS));
    expect(BATCH.map((c) => c.door)).toEqual(['MCP']);
    expect(new Set(ALL.map((c) => c.name)).size, 'case names are unique').toBe(ALL.length);
  });
});

group(`the limiter charges one unit per operation (burst ${BURST}, one tenant each)`, LIMITER, 8);
group('a failed credential spends none of the tenant’s budget', FAILED, 5);
group('a token without the operation’s scope is refused', SCOPE, 8, async () => void (tokens = await scopeTokens(base)));
// one at a time: each is timed against a tiny request to its door
group('long names are refused, each within a second', LONG, 1, makeHostile);
group('a body over 1 MiB is 413 in the door’s dialect', BIG, 4, makeHostile);
group('long numbers are refused through every door', NUMBERS, 6, makeHostile);
group('/mcp takes one JSON-RPC message a POST', BATCH, 1, makeHostile);

for (const door of PROTO_ORDER)
  describe(`${door}: prototype names reach no prototype`, () => {
    group(`${door}: every prototype case`, PROTO.get(door)!, 6, makeHostile);
    it(`${door}: afterwards another tenant is served as before`, async () => {
      const problem = await pollutionProblem(base);
      if (problem) throw new Error(`after the ${door} prototype cases: ${problem}`);
    });
  });
