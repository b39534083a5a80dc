import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { describeFaithfulCounts, faithfulExpectation, faithfulProblems } from '../../scripts/lib/aws-faithful.ts';
import { startLocalStack, type LocalStack } from '../../scripts/lib/local-stack.ts';
import { Api, expectError } from '../support/api.ts';
import { withinListLag } from '../support/list-lag.ts';

/**
 * Contract section 14 where reads can be stale: this file runs its own local stack in the AWS-faithful mode
 * (scripts/lib/aws-faithful.ts: eventually consistent reads and index queries answer the state of 1 s ago,
 * faults at 2 %), on a table of its own in the run's DynamoDB Local, whatever mode the suite's stack is in.
 * Every read of a record by uuid must reflect the caller's acknowledged write at once; lists within 2 s.
 */
describe('consistency in the AWS-faithful mode (contract section 14)', () => {
  let stack: LocalStack;
  let dataDir: string;
  let admin: Api;
  let member: Api;
  let memberUuid: string;
  let period: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'goal-tracking-faithful-'));
    Object.assign(process.env, { AWS_FAITHFUL_STALE_MS: '1000', AWS_FAITHFUL_FAULT_RATE: '0.02', TENANT_RATE_LIMIT_RPS: '0' });
    stack = await startLocalStack({
      port: 0,
      dataDir,
      inMemory: true,
      quiet: true,
      awsFaithful: true,
      tableName: `faithful-${randomUUID().slice(0, 8)}`,
      dynamo: { endpoint: inject('dynamoEndpoint'), stop: async () => {} }, // the run's DynamoDB Local, left running
    });
    const out = (await runAdmin([
      'create-tenant',
      '--name',
      'Faithful',
      '--admin-email',
      `admin-${randomUUID().slice(0, 8)}@example.test`,
    ])) as {
      tenant_uuid: string;
      token: string;
    };
    admin = new Api(out.token, stack.url);
    const user = await admin.post('/rest/v2/users', { user: { email: `m-${randomUUID().slice(0, 8)}@example.test`, role: 'member' } });
    expect(user.status).toBe(201);
    memberUuid = user.body.data.record.uuid;
    const token = (await runAdmin(['issue-token', '--tenant', out.tenant_uuid, '--user', memberUuid])) as { token: string };
    member = new Api(token.token, stack.url);
    // the member's first request follows its creation at once: its user is read by id
    expect((await member.get('/rest/v2/objectives')).status).toBe(200);
    const p = await admin.post('/rest/v2/time_periods', { name: 'Q1', start_date: '2025-01-01', end_date: '2025-03-31' });
    expect(p.status).toBe(201);
    period = p.body.data.record.uuid;
  });

  afterAll(async () => {
    // This stack proves it ran in the AWS-faithful mode as the suite's own does (test/setup/global.ts): it injected
    // faults and served stale reads, as the environment set above expects.
    const counts = stack?.faithfulCounts();
    const problems = stack ? faithfulProblems(counts, faithfulExpectation()) : [];
    if (counts) console.log(`consistency stack: ${describeFaithfulCounts(counts)}`);
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    expect(problems).toEqual([]);
  });

  it('a GET by uuid reflects the acknowledged create, update, check-in (and the rollup ancestors it moved) and delete at once', async () => {
    const o = await admin.post('/rest/v2/objectives', { title: 'O', time_period_uuid: period });
    expect(o.status).toBe(201);
    const O = o.body.data.record.uuid;
    expect((await admin.get(`/rest/v2/objectives/${O}`)).body.data.record.title).toBe('O');
    expect((await admin.put(`/rest/v2/objectives/${O}`, { progress_mode: 'rollup' })).status).toBe(200);
    expect((await admin.get(`/rest/v2/objectives/${O}`)).body.data.record.progress_mode).toBe('rollup');

    const metric = { start_value: 0, target_value: 10, metric_type: 'reach' };
    const k = await admin.post('/rest/v2/key_results', { title: 'K', time_period_uuid: period, parents: [O], metric });
    expect(k.status).toBe(201);
    const K = k.body.data.record.uuid;
    expect((await admin.put(`/rest/v2/key_results/${K}`, { title: 'K renamed' })).status).toBe(200);
    expect((await admin.get(`/rest/v2/key_results/${K}`)).body.data.record.title).toBe('K renamed');

    for (const [value, progress] of [
      [4, 40],
      [7, 70],
    ]) {
      const c = await admin.post('/rest/v2/checkins', { goal_uuid: K, value });
      expect(c.status).toBe(201);
      expect((await admin.get(`/rest/v2/checkins/${c.body.data.record.uuid}`)).body.data.record.value).toBe(value);
      expect((await admin.get(`/rest/v2/key_results/${K}`)).body.data.record).toMatchObject({
        current_value: value,
        current_progress: progress,
      });
      expect((await admin.get(`/rest/v2/objectives/${O}`)).body.data.record.current_progress).toBe(progress);
    }

    // its last child discarded, the rollup has nothing to follow
    expect((await admin.delete(`/rest/v2/key_results/${K}`)).status).toBe(200);
    expect((await admin.get(`/rest/v2/key_results/${K}`)).body.data.record.discarded_at).toEqual(expect.any(String));
    expect((await admin.get(`/rest/v2/objectives/${O}`)).body.data.record.current_progress).toBeNull();
  });

  it('a goal switched to rollup right after a child is linked counts it at once (its child list is read strongly)', async () => {
    const o = await admin.post('/rest/v2/objectives', { title: 'to roll up', time_period_uuid: period });
    const metric = { start_value: 0, target_value: 10, metric_type: 'reach' };
    const k = await admin.post('/rest/v2/key_results', { title: 'K', time_period_uuid: period, metric });
    expect([o.status, k.status]).toEqual([201, 201]);
    const [O, K] = [o.body.data.record.uuid, k.body.data.record.uuid];
    expect((await admin.post('/rest/v2/checkins', { goal_uuid: K, value: 3 })).status).toBe(201);
    // (each route warmed first: the switch must follow the link within the index's 1 s lag)
    expect((await admin.put(`/rest/v2/objectives/${O}`, { title: 'to roll up' })).status).toBe(200);
    // linked under a manual goal (nothing moves), then the goal switched: the recompute reads the child list
    expect((await admin.put(`/rest/v2/key_results/${K}`, { parents: [O] })).status).toBe(200);
    const switched = await admin.put(`/rest/v2/objectives/${O}`, { progress_mode: 'rollup' });
    expect(switched.status).toBe(200);
    expect(switched.body.data.record.current_progress).toBe(30);
    expect((await admin.get(`/rest/v2/objectives/${O}`)).body.data.record.current_progress).toBe(30);
  });

  it('a member removed from a team is refused the team’s limited goal at once, and one added sees it at once', async () => {
    const team = await admin.post('/rest/v2/teams', { name: `team ${randomUUID().slice(0, 8)}`, member_uuids: [memberUuid] });
    expect(team.status).toBe(201);
    const T = team.body.data.record.uuid;
    const g = await admin.post('/rest/v2/objectives', {
      title: 'team only',
      time_period_uuid: period,
      visibility: 'limited',
      team_uuids: [T],
    });
    expect(g.status).toBe(201);
    const G = g.body.data.record.uuid;
    expect((await member.get(`/rest/v2/objectives/${G}`)).status).toBe(200);

    expect((await admin.put(`/rest/v2/teams/${T}`, { member_uuids: [] })).status).toBe(200);
    expectError(await member.get(`/rest/v2/objectives/${G}`), 403, 'forbidden');
    expect((await admin.put(`/rest/v2/teams/${T}`, { member_uuids: [memberUuid] })).status).toBe(200);
    expect((await member.get(`/rest/v2/objectives/${G}`)).status).toBe(200);
  });

  it('a goal made limited is refused by GET at once and leaves the member’s list within 2 s; a new one is listed within 2 s', async () => {
    const g = await admin.post('/rest/v2/objectives', { title: 'soon limited', time_period_uuid: period });
    expect(g.status).toBe(201);
    const G = g.body.data.record.uuid;
    expect((await member.get(`/rest/v2/objectives/${G}`)).status).toBe(200);
    const listed = async () =>
      (await member.get(`/rest/v2/objectives?q[uuid_eq]=${G}`)).body.data.records.map((r: { uuid: string }) => r.uuid);
    await withinListLag(async () => expect(await listed()).toEqual([G]));

    expect((await admin.put(`/rest/v2/objectives/${G}`, { visibility: 'limited' })).status).toBe(200);
    expectError(await member.get(`/rest/v2/objectives/${G}`), 403, 'forbidden');
    await withinListLag(async () => expect(await listed()).toEqual([]));
  });
});
