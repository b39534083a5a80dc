import { describe, expect, it } from 'vitest';
import { expectError, newTenant } from '../support/api.ts';

/**
 * The directory lists (users, teams, labels, time periods) start alongside the caller's read, as goal lists do
 * (apiHandler `early`, shared/list/start.ts): page 1 is two round trips, and a refused caller still wins over
 * whatever the list found wrong meanwhile.
 */
const LISTS = ['/rest/v2/users', '/rest/v2/teams', '/rest/v2/labels', '/rest/v2/time_periods'] as const;
const rt = (res: { headers: Headers }) => Number(res.headers.get('x-db-round-trips'));

describe('directory lists', () => {
  it('page 1 is the caller beside the first keys, then the records: two round trips; every record listed for any role', async () => {
    const t = await newTenant();
    const member = await t.user();
    for (let i = 0; i < 3; i++) {
      expect((await t.admin.post('/rest/v2/teams', { name: `team ${i}` })).status).toBe(201);
      expect((await t.admin.post('/rest/v2/labels', { name: `label ${i}` })).status).toBe(201);
      expect(
        (
          await t.admin.post('/rest/v2/time_periods', {
            name: `Q${i + 1}`,
            start_date: `2026-0${3 * i + 1}-01`,
            end_date: `2026-0${3 * i + 3}-28`,
          })
        ).status,
      ).toBe(201);
    }
    for (const path of LISTS) {
      const byAdmin = await t.admin.get(path);
      expect(byAdmin.status, path).toBe(200);
      expect(byAdmin.body.data.records.length, path).toBeGreaterThanOrEqual(2);
      expect(rt(byAdmin), path).toBe(2);
      const byMember = await member.api.get(path);
      expect(
        byMember.body.data.records.map((r: { uuid: string }) => r.uuid),
        path,
      ).toEqual(byAdmin.body.data.records.map((r: { uuid: string }) => r.uuid));
      expect(rt(byMember), path).toBe(2);
    }
  });

  it('a refused caller wins over anything the list found wrong meanwhile (401 before 400)', async () => {
    const t = await newTenant();
    const member = await t.user();
    for (const path of LISTS) expectError(await member.api.get(`${path}?q[colour_eq]=red`), 400);
    expect((await t.admin.put(`/rest/v2/users/${member.uuid}`, { user: { status: 'inactive' } })).status).toBe(200);
    for (const path of LISTS) {
      expectError(await member.api.get(`${path}?q[colour_eq]=red`), 401, 'unauthorized');
      expectError(await member.api.get(`${path}?page=3`), 401, 'unauthorized');
    }
  });
});
