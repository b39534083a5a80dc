import { baseDb } from '#shared/db/client.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import { rmPartition, RM_LIST } from '#shared/read-models/goal-entries.ts';
import { newTenant, type TenantFixture } from './api.ts';
import { eventually } from './eventually.ts';

/** A tenant of its own for the markers (per test file), so they add nothing to what a test looks at. */
let marker: Promise<{ t: TenantFixture; period: string }> | undefined;

async function markerTenant() {
  const t = await newTenant('stream markers');
  const res = await t.admin.post('/rest/v2/time_periods', { name: 'Markers', start_date: '2025-01-01', end_date: '2025-12-31' });
  if (res.status !== 201) throw new Error(`marker period: ${res.status} ${JSON.stringify(res.body)}`);
  return { t, period: res.body.data.record.uuid as string };
}

/**
 * Writes a marker goal and waits until the stream has applied it (its status list entry is written by the stream
 * only): every read of the shard before the marker's is applied by then, its own perhaps not in full (see below).
 */
export async function markerApplied(): Promise<void> {
  const { t, period } = await (marker ??= markerTenant().catch((err) => {
    marker = undefined;
    throw err;
  }));
  const res = await t.admin.post('/rest/v2/objectives', { title: 'stream marker', time_period_uuid: period });
  if (res.status !== 201) throw new Error(`marker goal: ${res.status} ${JSON.stringify(res.body)}`);
  const uuid = res.body.data.record.uuid as string;
  const ctx = { tenantId: t.tenantUuid, db: baseDb() };
  const partition = rmPartition(t.tenantUuid, 'objective', RM_LIST.periodStatus, `${period}#not_started`);
  await eventually(async () => {
    for await (const e of partitionEntries(ctx, partition)) if (e.id === uuid) return;
    throw new Error(`stream marker ${uuid} not applied yet`);
  });
}

/**
 * Resolves once the change stream has applied every change committed before the call: what a negative check
 * ("no e-mail was queued", "no other tenant's event") waits for instead of a fixed sleep. The local poller
 * (scripts/lib/stream-poller.ts) delivers each read of the shard (DynamoDB Local has one) in lanes at once, and
 * reads on only once every lane of it is done: a marker seen applied proves its read was taken (so every earlier
 * read is done), and a second marker, written after that, is in a later read, so seeing it applied proves the
 * first one's read applied in full. What the stream queued for a worker is queued by then; a test that checks a
 * worker's effect then waits for a marker of that queue too.
 */
export async function afterStreamPasses(): Promise<void> {
  await markerApplied();
  await markerApplied();
}
