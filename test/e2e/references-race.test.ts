import { beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type TenantFixture } from '../support/api.ts';
import { RACE_TIMEOUT_MS } from './trees.fixture.ts';

/**
 * A delete that refuses while dependents exist (422 has_dependents) must not let a concurrent goal create
 * slip through: whatever the interleaving, either the goal is refused (422 on its reference) or the delete
 * is (has_dependents), never both committed. Many rounds, each a fresh period or team.
 */
const ROUNDS = 20;

describe('deletes racing goal creates', () => {
  let t: TenantFixture;
  beforeAll(async () => {
    t = await newTenant();
  });

  it(
    'a time period delete and a goal create in that period never both succeed',
    async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const period = (
          await t.admin.post('/rest/v2/time_periods', { name: `race ${round}`, start_date: '2025-01-01', end_date: '2025-03-31' })
        ).body.data.record;
        const [created, deleted] = await Promise.all([
          t.admin.post('/rest/v2/objectives', { title: `race ${round}`, time_period_uuid: period.uuid }),
          t.admin.delete(`/rest/v2/time_periods/${period.uuid}`),
        ]);
        expect([201, 422], JSON.stringify(created.body)).toContain(created.status);
        expect([200, 422], JSON.stringify(deleted.body)).toContain(deleted.status);
        expect(created.status === 201 && deleted.status === 200, `round ${round}: a goal in a deleted period`).toBe(false);
        if (deleted.status === 422) expect(deleted.body.error.code).toBe('has_dependents');
        const periodNow = await t.admin.get(`/rest/v2/time_periods/${period.uuid}`);
        expect(periodNow.status).toBe(created.status === 201 ? 200 : 404);
      }
    },
    RACE_TIMEOUT_MS,
  );

  it(
    'a team delete and a goal create on that team never both succeed',
    async () => {
      const period = (await t.admin.post('/rest/v2/time_periods', { name: 'team races', start_date: '2025-01-01', end_date: '2025-03-31' }))
        .body.data.record;
      for (let round = 0; round < ROUNDS; round++) {
        const team = (await t.admin.post('/rest/v2/teams', { name: `race ${round}` })).body.data.record;
        const [created, deleted] = await Promise.all([
          t.admin.post('/rest/v2/objectives', { title: `race ${round}`, time_period_uuid: period.uuid, team_uuids: [team.uuid] }),
          t.admin.delete(`/rest/v2/teams/${team.uuid}`),
        ]);
        expect([201, 422], JSON.stringify(created.body)).toContain(created.status);
        expect([200, 422], JSON.stringify(deleted.body)).toContain(deleted.status);
        expect(created.status === 201 && deleted.status === 200, `round ${round}: a goal on a deleted team`).toBe(false);
        if (deleted.status === 422) expect(deleted.body.error.code).toBe('has_dependents');
      }
    },
    RACE_TIMEOUT_MS,
  );
});
