import { Resvg } from '@resvg/resvg-js';
import { describe, expect, it } from 'vitest';
import { expectedProgress } from '#shared/domain/goals/pace.ts';
import { todayUtc } from '#shared/clock.ts';
import { expectError, listAll, type Api } from '../support/api.ts';
import { C, checkin } from './checkins.fixture.ts';
import { createPeriod, goal, goalTenant, P } from './goals.fixture.ts';
import { eventually } from '../support/eventually.ts';

/** History comes from the change stream, which can lag minutes behind a busy full suite (the fuzz run writes thousands of items). */
const STREAM_LAG_MS = 150_000;
const TEST_MS = 300_000;

const history = (api: Api, kind: 'objectives' | 'key_results' | 'initiatives', uuid: string) => listAll(api, P(kind, uuid, '/history'));
const slim = (records: any[]) => records.map((r) => [r.cause, r.value, r.progress, r.status]);

describe('goal history (from the change stream)', () => {
  it(
    'records every change of value, progress or status with its cause, oldest first',
    async () => {
      const { t, period } = await goalTenant();
      const parent = await goal(t.admin, 'objectives', { title: 'Parent', time_period_uuid: period.uuid });
      expect((await t.admin.put(P('objectives', parent.uuid), { progress_mode: 'rollup' })).status).toBe(200);
      const kr = await goal(t.admin, 'key_results', {
        title: 'KR',
        time_period_uuid: period.uuid,
        metric: { target_value: 200 },
        parents: [parent.uuid],
      });

      const first = await checkin(t.admin, { goal_uuid: kr.uuid, value: 50, status: 'on_track', checkin_date: '2025-01-10' });
      await checkin(t.admin, { goal_uuid: kr.uuid, value: 50, status: 'on_track', checkin_date: '2025-01-05' }); // behind the latest: the goal does not move
      const second = await checkin(t.admin, { goal_uuid: kr.uuid, value: 100, status: 'on_track', checkin_date: '2025-01-20' });
      expect((await t.admin.put(C(second.uuid), { value: 150, status: 'at_risk' })).status).toBe(200);
      expect((await t.admin.delete(C(second.uuid))).status).toBe(200);
      expect((await t.admin.put(P('key_results', kr.uuid), { metric: { target_value: 100 } })).status).toBe(200);
      expect((await t.admin.put(P('key_results', kr.uuid), { title: 'Renamed' })).status).toBe(200); // not a history point

      const krHistory = await eventually(async () => {
        const h = await history(t.admin, 'key_results', kr.uuid);
        expect(h).toHaveLength(5);
        return h;
      }, STREAM_LAG_MS);
      expect(slim(krHistory)).toEqual([
        ['checkin', 50, 25, 'on_track'],
        ['checkin', 100, 50, 'on_track'],
        ['checkin_updated', 150, 75, 'at_risk'],
        ['checkin_deleted', 50, 25, 'on_track'],
        ['metric_changed', 50, 50, 'on_track'],
      ]);
      const times = krHistory.map((r) => r.at);
      expect([...times].sort()).toEqual(times);
      expect(Object.keys(krHistory[0]).sort()).toEqual(['at', 'cause', 'progress', 'status', 'value']);

      // the parent's points follow its own changes, which the stream applies apart from the key result's: wait for all six
      const parentHistory = await eventually(async () => {
        const h = await history(t.admin, 'objectives', parent.uuid);
        expect(h.length).toBeGreaterThanOrEqual(6);
        return h;
      }, STREAM_LAG_MS);
      expect(parentHistory.every((r) => r.cause === 'rollup')).toBe(true);
      expect(parentHistory.map((r) => r.progress)).toEqual([0, 25, 50, 75, 25, 50]); // 0: the child joined without progress
      expect(first.uuid).toBeTruthy();
    },
    TEST_MS,
  );

  it(
    'paginates like any list, refuses filters, and follows goal visibility; another tenant is 404',
    async () => {
      const { t, period } = await goalTenant();
      const kr = await goal(t.admin, 'key_results', { title: 'Paged', time_period_uuid: period.uuid, visibility: 'limited' });
      for (let v = 1; v <= 7; v++)
        await checkin(t.admin, { goal_uuid: kr.uuid, value: v * 10, checkin_date: `2025-01-${String(v).padStart(2, '0')}` });
      await eventually(async () => expect(await history(t.admin, 'key_results', kr.uuid)).toHaveLength(7), STREAM_LAG_MS);
      const page2 = await t.admin.get(P('key_results', kr.uuid, '/history?page=2&per_page=3&count=true'));
      expect(page2.status).toBe(200);
      expect(page2.body.data).toMatchObject({
        type: 'history',
        pagy: { page: 2, per_page: 3, offset: 0, next: 3, prev: 1, count: 7 },
        filters: {},
      });
      expect(page2.body.data.records.map((r: any) => r.value)).toEqual([40, 50, 60]);
      const last = await t.admin.get(P('key_results', kr.uuid, '/history?page=3&per_page=3'));
      expect(last.body.data.records.map((r: any) => r.value)).toEqual([70]);
      expect(last.body.data.pagy.next).toBeNull();
      expectError(await t.admin.get(P('key_results', kr.uuid, '/history?q[cause_eq]=checkin')), 400, 'bad_request');

      const member = await t.user({ role: 'member' });
      expectError(await member.api.get(P('key_results', kr.uuid, '/history')), 403, 'forbidden');
      expectError(await member.api.get(P('key_results', kr.uuid, '/progress.svg')), 403, 'forbidden');
      const other = await goalTenant();
      expectError(await other.t.admin.get(P('key_results', kr.uuid, '/history')), 404, 'not_found');
      expectError(await other.t.admin.get(P('key_results', kr.uuid, '/progress.svg')), 404, 'not_found');
      expectError(await t.admin.get(P('objectives', kr.uuid, '/history')), 404, 'not_found'); // another kind's path
    },
    TEST_MS,
  );

  it(
    'GET progress.svg is an SVG line chart of the history that renders to a non-blank image',
    async () => {
      const { t } = await goalTenant();
      const today = todayUtc();
      const year = Number(today.slice(0, 4));
      const period = await createPeriod(t.admin, 'This year', `${year}-01-01`, `${year}-12-31`);
      const kr = await goal(t.admin, 'key_results', { title: 'Charted', time_period_uuid: period.uuid, metric: { target_value: 10 } });
      for (const v of [2, 4, 7]) await checkin(t.admin, { goal_uuid: kr.uuid, value: v });
      await eventually(async () => expect(await history(t.admin, 'key_results', kr.uuid)).toHaveLength(3), STREAM_LAG_MS);

      const res = await fetch(`${t.admin.baseUrl}${P('key_results', kr.uuid, '/progress.svg')}`, {
        headers: { authorization: `Bearer ${t.admin.token}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      const svg = await res.text();
      expect(svg).toContain('viewBox="0 0 600 300"');
      expect(svg).toContain('>today<');
      expect(svg.match(/<circle /g)).toHaveLength(3);
      const image = new Resvg(svg, { fitTo: { mode: 'width', value: 600 }, font: { loadSystemFonts: true } }).render();
      const pixels = image.pixels; // a copy per access: read it once
      let blue = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 2]! > 180 && pixels[i]! < 90) blue++;
      expect(blue).toBeGreaterThan(200);

      // the goal record carries its pace
      const record = (await t.admin.get(P('key_results', kr.uuid))).body.data.record;
      const expected = expectedProgress(record, today);
      expect(record.expected_progress).toBe(expected);
      expect(record.current_progress).toBe(70);
      expect(record.pace).toBe(70 >= expected + 10 ? 'ahead' : 70 <= expected - 10 ? 'behind' : 'on_pace');
    },
    TEST_MS,
  );
});
