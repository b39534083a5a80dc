import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { baseDb } from '#shared/db/client.ts';
import { mutateEntity } from '#shared/command/run.ts';
import { getEntity } from '#shared/db/reads.ts';
import { getSide } from '#shared/db/side-items.ts';
import { goalEntity } from '#shared/domain/goals/entity.ts';
import { createGoal } from '#shared/domain/goals/create.ts';
import { IMPORT_MAX_IN_FLIGHT, importEntity, importGoalUuid, importSlotKey, type ImportRecord } from '#shared/domain/imports/entity.ts';
import { finishImport, startImport } from '#shared/domain/imports/service.ts';
import { ImportsInFlightError } from '#shared/domain/imports/slots.ts';
import { ImportBusy, runImport } from '#shared/domain/imports/worker.ts';
import { parseImportRow } from '#shared/schemas/imports.ts';
import { NotFoundError } from '#shared/errors.ts';
import { logger } from '#shared/logger.ts';
import { expectError, listAll, type Api } from '../support/api.ts';
import { countingCtx, createPeriod, goal, goalTenant } from './goals.fixture.ts';

/** Polls an import until it is finished; returns every state seen on the way. */
async function finished(api: Api, uuid: string, timeoutMs = 60_000) {
  const seen: Array<{ state: string; done: number }> = [];
  for (const until = Date.now() + timeoutMs; Date.now() < until; ) {
    const res = await api.get(`/rest/v2/imports/${uuid}`);
    expect(res.status).toBe(200);
    const r = res.body.data.record;
    seen.push({ state: r.state, done: r.done });
    if (r.state === 'succeeded' || r.state === 'failed') return { record: r, seen };
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`import ${uuid} did not finish: ${JSON.stringify(seen.at(-1))}`);
}

/** The stored import, read from the table: polling through the API would spend the rate limit the test measures. */
async function storedImport(tenantId: string, uuid: string): Promise<ImportRecord> {
  const stored = await getEntity({ tenantId, db: baseDb() }, importEntity, uuid, true);
  if (!stored) throw new Error(`no import ${uuid}`);
  return stored.record;
}

/** Polls the stored import until `until` holds (then returns it). */
async function importWhen(tenantId: string, uuid: string, until: (r: ImportRecord) => boolean, timeoutMs = 90_000): Promise<ImportRecord> {
  let r = await storedImport(tenantId, uuid);
  for (const end = Date.now() + timeoutMs; !until(r); r = await storedImport(tenantId, uuid)) {
    if (Date.now() > end)
      throw new Error(`import ${uuid} never got there: ${JSON.stringify({ state: r.state, done: r.done, resume_at: r.resume_at })}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return r;
}

const ended = (r: ImportRecord) => r.state === 'succeeded' || r.state === 'failed';
const objectiveRows = (period: { uuid: string }, n: number, prefix = 'r') =>
  Array.from({ length: n }, (_, i) => ({
    ref: `${prefix}${i}`,
    kind: 'objective',
    title: `${prefix} goal ${i}`,
    time_period_uuid: period.uuid,
  }));

const post = (api: Api, body: unknown, contentType = 'application/json', headers: Record<string, string> = {}) =>
  api.request('POST', '/rest/v2/imports', typeof body === 'string' ? body : JSON.stringify(body), {
    'content-type': contentType,
    ...headers,
  });

describe('goal import', () => {
  it('creates every row (JSON), parents by ref in order, and answers created ref → uuid', async () => {
    const { t, period } = await goalTenant();
    const member = await t.user({ role: 'member' });
    const rows = [
      {
        ref: 'o1',
        kind: 'objective',
        title: 'Delight customers',
        time_period_uuid: period.uuid,
        owner_uuids: [member.uuid],
        labels: ['import-test'],
      },
      { ref: 'k1', kind: 'key_result', title: 'NPS 50', time_period_uuid: period.uuid, parent_refs: ['o1'], metric: { target_value: 50 } },
      {
        ref: 'k2',
        kind: 'key_result',
        title: 'Churn under 2%',
        time_period_uuid: period.uuid,
        parent_refs: ['o1'],
        metric: { start_value: 5, target_value: 2 },
      },
      {
        ref: 'i1',
        kind: 'initiative',
        title: 'Onboarding calls',
        time_period_uuid: period.uuid,
        parent_refs: ['k1', 'k2'],
        description: 'weekly',
      },
    ];
    const res = await post(member.api, { goals: rows });
    expect(res.status).toBe(202);
    expect(res.body.data.type).toBe('import');
    expect(res.body.data.record).toMatchObject({ state: 'validating', total: 4, done: 0, errors: [], created: null, finished_at: null });
    const { record } = await finished(member.api, res.body.data.record.uuid);
    expect(record).toMatchObject({ state: 'succeeded', total: 4, done: 4, errors: [] });
    expect(Object.keys(record.created)).toEqual(['o1', 'k1', 'k2', 'i1']);
    const kr = (await member.api.get(`/rest/v2/key_results/${record.created.k1}`)).body.data.record;
    expect(kr).toMatchObject({
      title: 'NPS 50',
      creator_uuid: member.uuid,
      target: 50,
      parent_links: [{ parent_uuid: record.created.o1, contribution_percent: 100 }],
    });
    const init = (await member.api.get(`/rest/v2/initiatives/${record.created.i1}`)).body.data.record;
    expect(init.parent_links.map((l: any) => l.parent_uuid)).toEqual([record.created.k1, record.created.k2]);
    const obj = (await member.api.get(`/rest/v2/objectives/${record.created.o1}`)).body.data.record;
    expect(obj).toMatchObject({
      owner_uuids: [member.uuid],
      labels: [{ name: 'import-test' }],
      start_date: period.start_date,
      end_date: period.end_date,
    });
    // listed for its creator and for admins; not for another member
    expect((await listAll(member.api, '/rest/v2/imports')).map((r) => r.uuid)).toEqual([record.uuid]);
    expect((await listAll(t.admin, '/rest/v2/imports')).map((r) => r.uuid)).toContain(record.uuid);
    const other = await t.user({ role: 'member' });
    expect(await listAll(other.api, '/rest/v2/imports')).toEqual([]);
    expectError(await other.api.get(`/rest/v2/imports/${record.uuid}`), 403, 'forbidden');
  });

  it('takes CSV with list cells separated by | and metric columns', async () => {
    const { t, period } = await goalTenant();
    const parent = await goal(t.admin, 'objectives', { title: 'Existing parent', time_period_uuid: period.uuid });
    const csv = [
      'ref,kind,title,time_period_uuid,labels,parents,parent_refs,metric.target_value,metric.metric_type',
      `a,objective,"Grow, fast",${period.uuid},q1|growth,${parent.uuid},,,`,
      `b,key_result,Revenue 1M,${period.uuid},,,a,1000000,reach`,
    ].join('\n');
    const res = await post(t.admin, csv, 'text/csv');
    expect(res.status).toBe(202);
    const { record } = await finished(t.admin, res.body.data.record.uuid);
    expect(record.state).toBe('succeeded');
    const a = (await t.admin.get(`/rest/v2/objectives/${record.created.a}`)).body.data.record;
    expect(a.title).toBe('Grow, fast');
    expect(a.labels.map((l: any) => l.name).sort()).toEqual(['growth', 'q1']);
    expect(a.parent_links).toEqual([{ parent_uuid: parent.uuid, contribution_percent: 100 }]);
    const b = (await t.admin.get(`/rest/v2/key_results/${record.created.b}`)).body.data.record;
    expect(b).toMatchObject({ target: 1_000_000, metric_type: 'reach' });
  });

  it('one invalid row fails the whole import, every row error listed, nothing created', async () => {
    const { t, period } = await goalTenant();
    const viewerOnlyParent = await goal(t.admin, 'objectives', { title: 'Admin only', time_period_uuid: period.uuid });
    const member = await t.user({ role: 'member' });
    const rows = [
      { ref: 'ok', kind: 'objective', title: 'Fine', time_period_uuid: period.uuid },
      { ref: 'ok', kind: 'objective', title: 'Duplicate ref', time_period_uuid: period.uuid },
      { ref: 'x', kind: 'epic', title: '', time_period_uuid: 'nope', colour: 'red' },
      {
        ref: 'y',
        kind: 'key_result',
        title: 'Bad refs',
        time_period_uuid: '00000000-0000-4000-8000-000000000000',
        parent_refs: ['later'],
        parents: [viewerOnlyParent.uuid],
        metric: { target_value: 0 },
      },
      {
        ref: 'later',
        kind: 'objective',
        title: 'Later',
        time_period_uuid: period.uuid,
        owner_uuids: ['11111111-1111-4111-8111-111111111111'],
      },
    ];
    const res = await post(member.api, { goals: rows });
    expect(res.status).toBe(202);
    const { record } = await finished(member.api, res.body.data.record.uuid);
    expect(record.state).toBe('failed');
    expect(record.done).toBe(0);
    expect(record.created).toBeNull();
    const byRow = (n: number) =>
      record.errors
        .filter((e: any) => e.row === n)
        .map((e: any) => e.field)
        .sort();
    expect(byRow(1)).toEqual([]);
    expect(byRow(2)).toEqual(['ref']);
    expect(byRow(3)).toEqual(['colour', 'kind', 'time_period_uuid', 'title']);
    expect(byRow(4)).toEqual(['metric.target_value', 'parent_refs', 'parents', 'time_period_uuid']);
    expect(record.errors.find((e: any) => e.row === 4 && e.field === 'parents').message).toMatch(/cannot place goals under/);
    expect(byRow(5)).toEqual(['owner_uuids']);
    expect(record.error_count).toBe(record.errors.length);
    // nothing was created: the first (valid) row's goal does not exist
    const ctx = { tenantId: t.tenantUuid, db: baseDb() };
    expect(await getEntity(ctx, goalEntity, importGoalUuid(record.uuid, 0))).toBeUndefined();
    expect((await listAll(member.api, '/rest/v2/objectives')).filter((g) => g.title === 'Fine')).toEqual([]);
  });

  it('refuses a malformed body at once: 400 not JSON / not {goals}, unknown CSV column; 422 no rows; 403 viewer; 415 other media', async () => {
    const { t, period } = await goalTenant();
    expectError(await post(t.admin, '{nope'), 400, 'bad_request');
    expectError(await post(t.admin, { rows: [] }), 400, 'bad_request');
    expectError(await post(t.admin, { goals: {} }), 400, 'bad_request');
    expectError(await post(t.admin, 'ref,kind,title,colour\na,objective,T,red', 'text/csv'), 400, 'bad_request');
    expectError(await post(t.admin, 'ref,kind\n"unclosed', 'text/csv'), 400, 'bad_request');
    expectError(await post(t.admin, { goals: [] }), 422, 'validation_failed');
    const viewer = await t.user({ role: 'viewer' });
    expectError(
      await post(viewer.api, { goals: [{ ref: 'a', kind: 'objective', title: 'T', time_period_uuid: period.uuid }] }),
      403,
      'forbidden',
    );
    expect((await listAll(t.admin, '/rest/v2/imports')).length).toBe(0);
  });

  it("another tenant's import is 404", async () => {
    const a = await goalTenant();
    const b = await goalTenant();
    const res = await post(a.t.admin, { goals: [{ ref: 'a', kind: 'objective', title: 'T', time_period_uuid: a.period.uuid }] });
    await finished(a.t.admin, res.body.data.record.uuid);
    expectError(await b.t.admin.get(`/rest/v2/imports/${res.body.data.record.uuid}`), 404, 'not_found');
    expect((await listAll(b.t.admin, '/rest/v2/imports')).length).toBe(0);
  });

  it('all or nothing: a row refused while creating removes what was created and ends failed', async () => {
    const { t, period } = await goalTenant();
    const late = await createPeriod(t.admin, 'Later', '2025-04-01', '2025-06-30');
    const rows = Array.from({ length: 130 }, (_, i) => ({
      ref: `r${i}`,
      kind: 'objective',
      title: `Goal ${i}`,
      time_period_uuid: i === 120 ? late.uuid : period.uuid,
      ...(i % 10 ? { parent_refs: [`r${i - 1}`] } : {}),
    }));
    const res = await post(t.admin, { goals: rows });
    const uuid = res.body.data.record.uuid;
    // the period row 121 names is deleted after validation, while the first batches are created
    for (;;) {
      const r = (await t.admin.get(`/rest/v2/imports/${uuid}`)).body.data.record;
      if (r.state !== 'validating') break;
      await new Promise((ok) => setTimeout(ok, 20));
    }
    expect((await t.admin.delete(`/rest/v2/time_periods/${late.uuid}`)).status).toBe(200);
    const { record, seen } = await finished(t.admin, uuid);
    expect(record.state).toBe('failed');
    expect(record.errors).toEqual([expect.objectContaining({ row: 121, field: 'time_period_uuid' })]);
    expect(seen.some((s) => s.state === 'importing' && s.done >= 100)).toBe(true); // done advanced by batches before the failure
    const ctx = { tenantId: t.tenantUuid, db: baseDb() };
    for (const i of [0, 1, 99, 100, 119, 120]) expect(await getEntity(ctx, goalEntity, importGoalUuid(uuid, i), true)).toBeUndefined();
    expect(await listAll(t.admin, '/rest/v2/objectives')).toEqual([]);
  });

  it('a delivery that died midway is resumed from done, skipping goals it already created; a duplicate delivery changes nothing', async () => {
    const { t, period } = await goalTenant();
    const { ctx } = await countingCtx(t, t.adminUuid);
    const data = { tenantId: t.tenantUuid, db: baseDb() };
    const rows = Array.from({ length: 150 }, (_, i) => ({
      ref: `r${i}`,
      kind: 'key_result',
      title: `KR ${i}`,
      time_period_uuid: period.uuid,
    }));
    const sent: unknown[] = [];
    const started = await startImport(ctx, rows, { send: async (_q, body) => (sent.push(body), 'm1') }); // queued, not delivered
    expect(sent).toEqual([{ tenant_uuid: t.tenantUuid, import_uuid: started.uuid }]);
    // first delivery dies after its first batch of 100
    const died = new Error('Lambda timed out');
    await expect(
      runImport(data, started.uuid, {
        log: logger,
        parseRow: parseImportRow,
        onProgress: (r) => {
          if (r.done === 100) throw died;
        },
      }),
    ).rejects.toBe(died);
    // ... having created row 101's goal too, before it could write done
    await createGoal(ctx, 'key_result', { title: 'KR 100', time_period_uuid: period.uuid }, { uuid: importGoalUuid(started.uuid, 100) });
    // a second delivery while the first one's lease runs waits (retried later)
    await expect(runImport(data, started.uuid, { log: logger, parseRow: parseImportRow })).rejects.toBeInstanceOf(ImportBusy);
    await mutateEntity(
      data,
      importEntity,
      started.uuid,
      (cur) => ({ ...cur.record, lease: { owner: 'dead', until: 0 } }),
      () => new NotFoundError('Import', started.uuid),
    );
    const resumed = await runImport(data, started.uuid, { log: logger, parseRow: parseImportRow });
    expect(resumed).toMatchObject({ state: 'succeeded', done: 150, total: 150 });
    const krs = await listAll(t.admin, '/rest/v2/key_results');
    expect(krs.length).toBe(150);
    expect(new Set(krs.map((g) => g.title)).size).toBe(150);
    expect(await runImport(data, started.uuid, { log: logger, parseRow: parseImportRow })).toMatchObject({ state: 'succeeded', done: 150 });
    expect((await listAll(t.admin, '/rest/v2/key_results')).length).toBe(150);
  });

  it('npm run admin -- import FILE --tenant T does the same from the command line', async () => {
    const { t, period } = await goalTenant();
    const dir = mkdtempSync(join(tmpdir(), 'import-cli-'));
    const file = join(dir, 'goals.csv');
    const lines = ['ref,kind,title,time_period_uuid,parent_refs'];
    for (let o = 0; o < 12; o++) {
      lines.push(`o${o},objective,Objective ${o},${period.uuid},`);
      for (let k = 0; k < 9; k++) lines.push(`o${o}k${k},key_result,KR ${o}.${k},${period.uuid},o${o}`);
    }
    writeFileSync(file, lines.join('\n'));
    const out = await runAdmin(['import', file, '--tenant', t.tenantUuid]);
    expect(out).toMatchObject({ state: 'succeeded', total: 120, done: 120, created: 120, creator_uuid: t.adminUuid });
    expect((await listAll(t.admin, '/rest/v2/key_results')).length).toBe(108);
    expect((await listAll(t.admin, '/rest/v2/objectives')).length).toBe(12);
    // a bad file changes nothing and says why
    writeFileSync(file, `ref,kind,title,time_period_uuid\na,objective,,${period.uuid}`);
    const bad = await runAdmin(['import', file, '--tenant', t.tenantUuid]);
    expect(bad).toMatchObject({ state: 'failed', errors: [expect.objectContaining({ row: 1, field: 'title' })] });
    process.exitCode = 0;
    await expect(runAdmin(['import', file, '--tenant', 'nope'])).rejects.toThrow(/--tenant/);
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates rows no faster than the tenant's rate limit: paced at the importing user's share, paused when the wait is long", async () => {
    const { t, period } = await goalTenant();
    const member = await t.user({ role: 'member' });
    // tenant 4 rps, burst 8: the member (half) 2 rps, burst 4; every row costs what a create request would
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '4', '--burst', '8']);
    const rows = objectiveRows(period, 20);
    const res = await post(member.api, { goals: rows });
    expect(res.status).toBe(202);
    const record = await importWhen(t.tenantUuid, res.body.data.record.uuid, ended);
    expect(record).toMatchObject({ state: 'succeeded', done: 20 });
    const ctx = { tenantId: t.tenantUuid, db: baseDb() };
    const created = await Promise.all(
      rows.map(async (_, i) => Date.parse((await getEntity(ctx, goalEntity, importGoalUuid(record.uuid, i), true))!.record.created_at)),
    );
    const t0 = Date.parse(record.created_at);
    // the k-th goal (1-based) needs k tokens: the burst of 4, then one every 0.5 s (a second of slack for the clock)
    created.sort((a, b) => a - b).forEach((at, i) => expect(at - t0, `goal ${i + 1}`).toBeGreaterThanOrEqual(((i + 1 - 4) / 2 - 1) * 1000));

    // A limit that refills slower than a delivery should wait: the import creates what the budget allows, then
    // pauses (a delayed message, no Lambda waiting) with nothing more created.
    const slow = await goalTenant();
    const m2 = await slow.t.user({ role: 'member' });
    await runAdmin(['set-limits', '--tenant', slow.t.tenantUuid, '--rps', '0.02', '--burst', '10']); // member: burst 5, a token per 100 s
    const res2 = await post(m2.api, { goals: objectiveRows(slow.period, 12) });
    expect(res2.status).toBe(202);
    const paused = await importWhen(slow.t.tenantUuid, res2.body.data.record.uuid, (r) => !!r.resume_at || ended(r));
    expect(paused).toMatchObject({ state: 'importing', lease: null });
    expect(paused.done).toBeGreaterThanOrEqual(4); // the burst, less the POST's own token
    expect(paused.done).toBeLessThanOrEqual(5);
    expect(Date.parse(paused.resume_at!) - Date.now()).toBeGreaterThan(30_000);
    const ctx2 = { tenantId: slow.t.tenantUuid, db: baseDb() };
    for (let i = 0; i < 12; i++)
      expect(!!(await getEntity(ctx2, goalEntity, importGoalUuid(paused.uuid, i), true)), `row ${i + 1}`).toBe(i < paused.done);
  }, 120_000);

  it(`holds a tenant to ${IMPORT_MAX_IN_FLIGHT} imports queued or running: a third is 429 with Retry-After until one ends`, async () => {
    const { t, period } = await goalTenant();
    const members = [await t.user({ role: 'member' }), await t.user({ role: 'member' }), await t.user({ role: 'member' })];
    // each member's budget refills a row per 10 s, so the imports stay in flight for a while (paused between rows)
    await runAdmin(['set-limits', '--tenant', t.tenantUuid, '--rps', '100', '--burst', '1000', '--user-rps', '0.1', '--user-burst', '2']);
    // three at once: the slots are taken by conditional writes, so exactly two get through
    const send = (i: number) =>
      post(members[i]!.api, { goals: objectiveRows(period, 4, `m${i}-`) }, 'application/json', { 'idempotency-key': `import-${i}` });
    const answers = await Promise.all(members.map((_, i) => send(i)));
    const answeredAt = Date.now();
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 429]);
    const refusedAt = answers.findIndex((a) => a.status === 429);
    const err = expectError(answers[refusedAt]!, 429, 'rate_limited');
    expect(err.details).toEqual([{ field: 'imports', code: 'imports_in_flight', message: expect.any(String) }]);
    expect(Number(answers[refusedAt]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const running = answers.filter((a) => a.status === 202).map((a) => a.body.data.record.uuid as string);
    const ctx = { tenantId: t.tenantUuid, db: baseDb() };
    // the refused import left nothing behind
    expect(
      (
        await ctx.db.send(
          new QueryCommand({
            TableName: process.env.TABLE_NAME,
            IndexName: 'GSI1',
            KeyConditionExpression: 'GSI1PK = :l',
            ExpressionAttributeValues: { ':l': `T#${t.tenantUuid}#import` },
          }),
        )
      )
        .Items!.map((i) => i.id)
        .sort(),
    ).toEqual([...running].sort());
    // both accepted imports were still in flight when the third was refused (neither had ended by then)
    for (const uuid of running) {
      const r = await storedImport(t.tenantUuid, uuid);
      expect(!ended(r) || Date.parse(r.finished_at!) > answeredAt).toBe(true);
    }

    // once one ends, its slot is free again: the refused member's import is accepted
    const first = await Promise.race(running.map((uuid) => importWhen(t.tenantUuid, uuid, ended)));
    expect(first.state).toBe('succeeded');
    expect(await getSide(ctx, importSlotKey(t.tenantUuid, first.slot!))).toBeUndefined();
    // the same request again, same Idempotency-Key: a 429 was not kept, so it is done now rather than replayed
    const again = await send(refusedAt);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  }, 120_000);

  it('never leaks a slot: an import that ended without freeing it, or was not touched for hours, gives it up', async () => {
    const { t, period } = await goalTenant();
    const { ctx } = await countingCtx(t, t.adminUuid);
    const data = { tenantId: t.tenantUuid, db: baseDb() };
    const queued = { send: async () => 'never-delivered' };
    const rows = objectiveRows(period, 1);
    const a = await startImport(ctx, rows, queued);
    const b = await startImport(ctx, rows, queued);
    await expect(startImport(ctx, rows, queued)).rejects.toBeInstanceOf(ImportsInFlightError);
    // a's worker died for good hours ago (its messages dead-lettered): its slot goes to the next import
    await mutateEntity(
      data,
      importEntity,
      a.uuid,
      (cur) => ({ ...cur.record, updated_at: new Date(Date.now() - 4 * 3600_000).toISOString() }),
      () => new NotFoundError('Import', a.uuid),
    );
    const c = await startImport(ctx, rows, queued);
    expect(c.slot).toBe(a.slot);
    await expect(startImport(ctx, rows, queued)).rejects.toBeInstanceOf(ImportsInFlightError);
    // a still ending later does not free the slot c holds now
    await finishImport(data, a.uuid, 'failed');
    expect(await getSide(data, importSlotKey(t.tenantUuid, c.slot!))).toMatchObject({ import_uuid: c.uuid });
    await expect(startImport(ctx, rows, queued)).rejects.toBeInstanceOf(ImportsInFlightError);
    // b ended but its worker died before freeing the slot: an ended holder frees it
    await mutateEntity(
      data,
      importEntity,
      b.uuid,
      (cur) => ({ ...cur.record, state: 'failed' as const }),
      () => new NotFoundError('Import', b.uuid),
    );
    expect(await getSide(data, importSlotKey(t.tenantUuid, b.slot!))).toMatchObject({ import_uuid: b.uuid });
    const d = await startImport(ctx, rows, queued);
    expect(d.slot).toBe(b.slot);
  });
});
