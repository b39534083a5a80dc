import { runCommand } from '#shared/command/run.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { commitPlanned } from '#shared/db/tx-ops.ts';
import { accept } from '#shared/decision.ts';
import { recordEvents } from '#shared/domain/events/feed.ts';
import { fanOut } from '#shared/domain/webhooks/deliveries.ts';
import { configuredEventBus } from '#shared/events/event-bus.ts';
import type { Log } from '#shared/logger.ts';
import { queueSender } from '#shared/queue/queue.ts';
import type { Step } from '#shared/stream/projection.ts';

/**
 * The one committer of every projection (shared/stream/projection.ts): runs a step as a command
 * (shared/command/run.ts runCommand, the store's one retry budget): `reads`, the clock read once the read is done
 * (a derived write's stamps follow the write it lost a race to), `project`, then its transactions committed in
 * order; a lost race (ConcurrentUpdateError: a version read moved, a create found its item, a transaction
 * conflict) runs reads-project-commit again. Then, once committed, its messages, its outbound events and its
 * further steps, and its log line. True when it (or a step it started) committed a write.
 */
export async function commitStep<S>(data: DataCtx, step: Step<S>, log: Log): Promise<boolean> {
  const { writes, committed } = await runCommand(data, {
    clock: { perAttempt: true },
    read: () => step.reads(data),
    decide: (state, now) => accept(step.project(state, now)),
    // every transaction is committed here, in order, and the runner's own stays empty: a plan may need several
    write: async (_tx, writes) => ({ writes, committed: await commitPlanned(data, writes.transactions, writes.packed) }),
  });
  for (const m of writes.messages ?? []) await queueSender().send(m.queue, m.body);
  let queued = 0;
  if (writes.outbound) {
    // the feed first: what it holds (the first write of each event id) is what the bus and the webhooks get
    const events = await recordEvents(data, writes.outbound.change, writes.outbound.events);
    await configuredEventBus()?.publish(events.map((e) => e.event));
    queued = await fanOut(data, events, queueSender());
  }
  const stepsWrote = writes.steps ? await commitSteps(data, writes.steps, writes.concurrency ?? 1, log) : 0;
  if (writes.log) {
    const count = writes.outbound ? queued : stepsWrote;
    if (!writes.log.onlyIfCounted || count > 0)
      log.info(writes.log.message, { ...writes.log.fields, ...(writes.log.count ? { [writes.log.count]: count } : {}) });
  }
  return committed > 0 || stepsWrote > 0;
}

/**
 * Commits steps `concurrency` at a time, each on its own (its own reads and retries); returns how many wrote.
 * Settled, not raced: the change fails (and is delivered again) only after every step in flight is done.
 */
async function commitSteps(data: DataCtx, steps: readonly Step<unknown>[], concurrency: number, log: Log): Promise<number> {
  const queue = [...steps];
  let wrote = 0;
  const workers = await Promise.allSettled(
    Array.from({ length: Math.min(concurrency, queue.length) }, async () => {
      for (let s = queue.shift(); s !== undefined; s = queue.shift()) if (await commitStep(data, s, log)) wrote++;
    }),
  );
  const failed = workers.find((w) => w.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return wrote;
}
