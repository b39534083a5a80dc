/**
 * Runs a batch's records concurrently across items and in order within one item: a record waits for the
 * previous record of the same key, then for one of `limit` slots. When a record fails, every later record
 * of the same key fails too without running, so an item's changes are never applied out of order (the event
 * source delivers them again from the first failure, in order).
 *
 * One instance per batch: the keys' tails live only as long as the batch.
 */
export function perItemInOrder<R>(
  keyOf: (record: R) => string,
  limit: number,
  run: (record: R) => Promise<void>,
): (record: R) => Promise<void> {
  const tails = new Map<string, Promise<void>>();
  const waiting: (() => void)[] = [];
  let active = 0;
  const acquire = () => (active < limit ? (active++, Promise.resolve()) : new Promise<void>((resolve) => waiting.push(resolve)));
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active--;
  };
  return (record) => {
    const key = keyOf(record);
    const previous = tails.get(key);
    const mine = (async () => {
      if (previous)
        await previous.catch(() => {
          throw new Error(`an earlier change of ${key} in this batch failed`);
        });
      await acquire();
      try {
        await run(record);
      } finally {
        release();
      }
    })();
    tails.set(key, mine);
    return mine;
  };
}
