import { keys } from '#shared/db/keys.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { querySidePage } from '#shared/db/side-items.ts';
import type { GoalKind } from '#shared/domain/goals/entity.ts';

/**
 * Page anchors (docs/data-model.md "Read models"): per goal kind, how many listed goals were created within each
 * tenth of a second (`created:<bucket>` counted like every read-model dimension, in the kind's anchor partition,
 * one item per bucket and counter shard). A deep page of the creation-order list sums them up to its position and
 * reads keys from its bucket on, instead of every key before it: oldest first from the oldest bucket, newest first
 * from the newest.
 *
 * They lag the table by the stream's delay like every read model, and a goal is created in the bucket of its
 * creation time: so a bucket is trusted only once it is SETTLE_MS old (the stream's StreamLag alarm: derived
 * state later than that is an incident). Oldest first, a page reads keys from the first younger bucket on; newest
 * first, the younger buckets come first, so their goals are counted on their keys (the list's unsettled head)
 * and the anchors are summed from the newest settled bucket on. A delete or a
 * visibility change of an older goal is counted after the stream's delay: until then a deep page may start one
 * record off per such change (a list written to while paged; contract 3 promises once-only paging without writes).
 */

/** How old a bucket must be before its count is trusted (the StreamLag alarm's threshold). */
export const SETTLE_MS = 60_000;

export interface Anchor {
  bucket: string;
  /** Listed (not discarded) goals created in the bucket, and of them limited ones. */
  n: number;
  nl: number;
}

/** Anchor items read per Query: a bucket holds at least one goal, so a position past N goals is within N + a few items. */
const MAX_READ = 1000;

/**
 * The kind's anchors from the oldest bucket (or, `newestFirst`, from the newest), shards summed, until they hold
 * more than `skip` goals or end; newest first, only buckets before `newestFirst.below` count towards `skip` (the
 * younger ones are counted on the list's keys). Eventually consistent, page by page (one Query for a position
 * within ~1,000 buckets).
 */
export async function readAnchors(ctx: DataCtx, kind: GoalKind, skip: number, newestFirst?: { below: string }): Promise<Anchor[]> {
  const out: Anchor[] = [];
  let held = 0;
  let startKey: Record<string, unknown> | undefined;
  const counts = (a: Anchor) => !newestFirst || a.bucket < newestFirst.below;
  do {
    const page = await querySidePage(ctx, keys.goalAnchorPartition(ctx.tenantId, kind), {
      prefix: '',
      forward: !newestFirst,
      startKey,
      limit: Math.min(skip - held + 20, MAX_READ),
    });
    for (const item of page.items) {
      const bucket = item.SK.slice(0, item.SK.lastIndexOf('#'));
      const last = out[out.length - 1];
      const anchor = last?.bucket === bucket ? last : (out[out.length] = { bucket, n: 0, nl: 0 });
      anchor.n += Number(item.n ?? 0);
      anchor.nl += Number(item.nl ?? 0);
    }
    held = out.reduce((sum, a) => sum + (counts(a) ? a.n : 0), 0);
    startKey = page.lastKey;
  } while (startKey && held <= skip);
  return out;
}

/** Where a page that skips `skip` goals starts: its bucket, and how many goals the buckets before it hold. */
export interface Placement {
  bucket: string;
  before: number;
}

/**
 * The bucket holding the goal at position `skip` (0-based, creation order), passing only settled buckets (before
 * `settled`, a bucket SETTLE_MS old): a page reaching an unsettled one, or the last anchor, starts there and reads
 * on. A caller that may not see every goal (`seesAll` false) is placed only past buckets without limited goals.
 * Undefined (the page walks keys from the start): nothing to pass.
 */
export function placePage(anchors: Anchor[], skip: number, seesAll: boolean, settled: string): Placement | undefined {
  return walkAnchors(anchors, skip, seesAll, 0, (a) => a.bucket < settled);
}

/**
 * The same newest first: `anchors` from the newest bucket, `head` the listed goals of the unsettled buckets (from
 * `settled` on), which come first and were counted exactly by the caller. The page starts in the settled bucket
 * holding position `skip` (or the last anchor read), with `before` counting the head and the buckets passed.
 * Undefined (the page walks keys from the newest): the page lies within the head, or nothing to pass.
 */
export function placePageNewestFirst(
  anchors: Anchor[],
  skip: number,
  seesAll: boolean,
  settled: string,
  head: number,
): Placement | undefined {
  if (head > skip) return undefined;
  return walkAnchors(
    anchors.filter((a) => a.bucket < settled),
    skip,
    seesAll,
    head,
    () => true,
  );
}

/** Sums `anchors` in list order from `before` goals on, passing only `trusted` buckets (see placePage). */
function walkAnchors(
  anchors: Anchor[],
  skip: number,
  seesAll: boolean,
  before: number,
  trusted: (a: Anchor) => boolean,
): Placement | undefined {
  for (const [i, a] of anchors.entries()) {
    if (before + a.n > skip || i === anchors.length - 1 || !trusted(a)) return before === 0 ? undefined : { bucket: a.bucket, before };
    if (!seesAll && a.nl > 0) return undefined;
    before += a.n;
  }
  return undefined;
}

/** The first list sort key of a bucket (sort keys start with `created_at`, of which the bucket is a prefix). */
export const bucketStart = (bucket: string) => bucket;

/** A bound above every list sort key of a bucket (`~` sorts after the digits, `Z`, `#` and hex a sort key holds after its bucket). */
export const bucketEnd = (bucket: string) => `${bucket}~`;
