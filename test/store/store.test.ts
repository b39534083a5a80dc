import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { baseDb } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { retryOnConflict } from '#shared/db/conflict-retries.ts';
import { entryList } from '#shared/db/entry-lists.ts';
import { entriesOf } from '#shared/db/index-queries.ts';
import { entry, type BaseRecord, type EntityDef } from '#shared/db/model.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { findUnique, getEntities, getEntity } from '#shared/db/reads.ts';
import { referencesTo, removeUnreferenced } from '#shared/db/references.ts';
import { getSide, querySide } from '#shared/db/side-items.ts';
import { WriteTx } from '#shared/db/write-tx.ts';
import { ConcurrentUpdateError, TakenError, TooManyWritesError, ValidationError } from '#shared/errors.ts';

/** The store on its own, against DynamoDB Local (no HTTP, no domain). */
interface Thing extends BaseRecord {
  name: string;
  owner: string;
}
const thingsByOwner = entryList('thing', 'owner');
const thing: EntityDef<Thing> = {
  type: 'thing',
  entries: (t) => [entry(thingsByOwner, t.owner)],
  uniques: (t) => [{ name: 'thing_name', value: t.name, onTaken: () => new TakenError('name', 'taken') }],
};

const ctx = (): DataCtx => ({ tenantId: randomUUID(), db: baseDb() });
const now = () => new Date().toISOString();
const newThing = (name: string, owner = 'o1'): Thing => ({ uuid: randomUUID(), name, owner, created_at: now(), updated_at: now() });
const collect = async <T>(it: AsyncIterable<T>) => {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
};

describe('store', () => {
  it('creates, reads (one and batched), replaces with version and keeps entries and claims in step', async () => {
    const c = ctx();
    const a = newThing('alpha');
    await new WriteTx(c).create(thing, a).commit();
    const read = await getEntity(c, thing, a.uuid, true);
    expect(read).toEqual({ record: a, version: 1 });
    expect((await getEntities(c, thing, [a.uuid, randomUUID()], true)).size).toBe(1);
    expect(await findUnique(c, 'thing_name', 'alpha', true)).toBe(a.uuid);

    const b: Thing = { ...a, name: 'beta', owner: 'o2' };
    await new WriteTx(c).replace(thing, read!, b).commit();
    expect((await getEntity(c, thing, a.uuid, true))?.version).toBe(2);
    expect(await findUnique(c, 'thing_name', 'alpha', true)).toBeUndefined();
    expect(await findUnique(c, 'thing_name', 'beta', true)).toBe(a.uuid);
    // GSI1 is eventually consistent: poll briefly
    await expect.poll(async () => (await collect(entriesOf(c, thingsByOwner, 'o2'))).map((e) => e.id)).toEqual([a.uuid]);
    expect(await collect(entriesOf(c, thingsByOwner, 'o1'))).toEqual([]);

    // a stale version loses: ConcurrentUpdateError, nothing written
    await expect(new WriteTx(c).replace(thing, read!, { ...a, name: 'gamma' }).commit()).rejects.toBeInstanceOf(ConcurrentUpdateError);
    expect(await findUnique(c, 'thing_name', 'gamma', true)).toBeUndefined();
  });

  it('maps a failed uniqueness claim to its typed error and writes nothing', async () => {
    const c = ctx();
    await new WriteTx(c).create(thing, newThing('same')).commit();
    const second = newThing('same');
    await expect(new WriteTx(c).create(thing, second).commit()).rejects.toBeInstanceOf(TakenError);
    expect(await getEntity(c, thing, second.uuid, true)).toBeUndefined();
  });

  it('condition checks: exists and version, each with its own error', async () => {
    const c = ctx();
    const a = newThing('a');
    await new WriteTx(c).create(thing, a).commit();
    const gone = () => ValidationError.field('thing', 'not_found', 'gone');
    await expect(new WriteTx(c).checkExists(thing, randomUUID(), gone).create(thing, newThing('b')).commit()).rejects.toBeInstanceOf(
      ValidationError,
    );
    expect(await findUnique(c, 'thing_name', 'b', true)).toBeUndefined();
    const read = (await getEntity(c, thing, a.uuid, true))!;
    await new WriteTx(c).checkExists(thing, a.uuid, gone).create(thing, newThing('c')).commit();
    await new WriteTx(c).checkVersion(thing, read).create(thing, newThing('c2')).commit();
    await new WriteTx(c).touch(thing, read).commit();
    expect(await getEntity(c, thing, a.uuid, true)).toEqual({ record: a, version: 2 });
    await expect(new WriteTx(c).checkVersion(thing, read).create(thing, newThing('d')).commit()).rejects.toBeInstanceOf(
      ConcurrentUpdateError,
    );
  });

  it('side items: conditional put, update with add, query newest first, delete', async () => {
    const c = ctx();
    const id = randomUUID();
    const key = (sk: string) => keys.misc(c.tenantId, 'thing_side', id, sk);
    await new WriteTx(c)
      .putSide(key('a'), { n: 1 }, { if: { exists: false } })
      .putSide(key('b'), { n: 2 })
      .commit();
    await expect(
      new WriteTx(c).putSide(key('a'), { n: 9 }, { if: { exists: false }, onFail: () => new TakenError('a', 'x') }).commit(),
    ).rejects.toBeInstanceOf(TakenError);
    await new WriteTx(c).updateSide(key('a'), { set: { s: 'x' }, add: { n: 10 }, if: { equals: { n: 1 }, atMost: { n: 5 } } }).commit();
    expect(await getSide(c, key('a'))).toEqual({ n: 11, s: 'x' });
    await expect(new WriteTx(c).updateSide(key('a'), { set: { s: 'y' }, if: { equals: { n: 1 } } }).commit()).rejects.toBeInstanceOf(
      ConcurrentUpdateError,
    );
    expect((await querySide(c, key('').PK, { forward: false })).map((i) => i.SK)).toEqual(['b', 'a']);
    await new WriteTx(c).deleteSide(key('b')).commit();
    expect(await getSide(c, key('b'))).toBeUndefined();
  });

  it('a transaction over 100 items is refused with 422 too_many naming the blamed field, before anything is written', async () => {
    const c = ctx();
    const tx = new WriteTx(c).blame('things');
    const many = Array.from({ length: 40 }, (_, i) => newThing(`n${i}`)); // 3 items each
    for (const t of many) tx.create(thing, t);
    const err = await tx.commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TooManyWritesError);
    expect((err as TooManyWritesError).status).toBe(422);
    expect((err as TooManyWritesError).details[0]).toMatchObject({ field: 'things', code: 'too_many' });
    expect(await getEntity(c, thing, many[0]!.uuid, true)).toBeUndefined();
  });

  it('reads with an over-long key find nothing instead of failing', async () => {
    const c = ctx();
    expect(await getEntity(c, thing, 'x'.repeat(3000))).toBeUndefined();
    expect(await getSide(c, keys.misc(c.tenantId, 'thing_side', 'x'.repeat(3000)))).toBeUndefined();
  });
});

describe('references that hold (removeUnreferenced vs a writer adding a reference)', () => {
  interface Target extends BaseRecord {
    name: string;
  }
  const target: EntityDef<Target> = { type: 'target' };
  const refsOfTarget = entryList('thing', 'target', { heldBy: 'target' });
  const referrer: EntityDef<Thing & { target: string }> = {
    type: 'thing',
    entries: (t) => [entry(refsOfTarget, t.target, () => ValidationError.field('target', 'not_found', 'gone'))],
  };
  const refused = () => new ValidationError('has dependents');

  it('a reference and the delete of its target never both commit (30 rounds), and the loser says why', async () => {
    const c = ctx();
    let created = 0;
    let deleted = 0;
    for (let round = 0; round < 30; round++) {
      const tg: Target = { uuid: randomUUID(), name: 't', created_at: now(), updated_at: now() };
      await new WriteTx(c).create(target, tg).commit();
      const ref = { ...newThing(`r${round}`), target: tg.uuid };
      const [w, d] = await Promise.allSettled([
        retryOnConflict(() => new WriteTx(c).create(referrer, ref).commit()),
        retryOnConflict(async () => removeUnreferenced(c, target, (await getEntity(c, target, tg.uuid, true))!, { onReferenced: refused })),
      ]);
      const refStored = !!(await getEntity(c, referrer, ref.uuid, true));
      const targetStored = !!(await getEntity(c, target, tg.uuid, true));
      // exactly one side wins: a reference to a live target, or a deleted target and no reference
      expect(refStored).toBe(targetStored);
      expect(w.status === 'fulfilled').toBe(refStored);
      expect(d.status === 'fulfilled').toBe(!targetStored);
      if (w.status === 'rejected') expect(w.reason).toBeInstanceOf(ValidationError);
      if (d.status === 'rejected') expect((d.reason as Error).message).toBe('has dependents');
      if (refStored) created++;
      else deleted++;
      expect(await referencesTo(c, 'target', tg.uuid)).toEqual(
        refStored ? [{ id: ref.uuid, list: 'thing', name: 'target', state: undefined }] : [],
      );
    }
    expect(created + deleted).toBe(30);
  });

  it('a discarded referrer does not block; a stale delete marker stops blocking new references', async () => {
    const c = ctx();
    const tg: Target = { uuid: randomUUID(), name: 't', created_at: now(), updated_at: now() };
    await new WriteTx(c).create(target, tg).commit();
    const withState: EntityDef<Thing & { target: string; gone?: boolean }> = {
      ...referrer,
      envelope: (t) => ({ state: t.gone ? 'discarded' : undefined }),
    };
    const ref = { ...newThing('x'), target: tg.uuid, gone: true };
    await new WriteTx(c).create(withState, ref).commit();
    await removeUnreferenced(c, target, (await getEntity(c, target, tg.uuid, true))!, { onReferenced: refused });
    expect(await getEntity(c, target, tg.uuid, true)).toBeUndefined();
    // a reference to the deleted target is refused with the referrer's own error
    await expect(new WriteTx(c).create(referrer, { ...newThing('y'), target: tg.uuid }).commit()).rejects.toBeInstanceOf(ValidationError);
  });
});
