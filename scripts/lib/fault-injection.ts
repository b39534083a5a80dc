import { createHash } from 'node:crypto';
import type { WorkerHandler } from '#shared/queue/queue.ts';

/** The same message always gets the same verdict (a poison message for this worker), so it is dead-lettered, not just retried. */
const failing = (messageId: string, rate: number) => createHash('sha256').update(messageId).digest().readUInt32BE(0) / 0x1_0000_0000 < rate;

/**
 * Fault injection for the local stack only (the chaos run): with LOCAL_FAULT_QUEUE=<queue> and
 * LOCAL_FAULT_RATE=<0..1>, that queue's worker fails about that fraction of its messages (the same ones on every
 * receive) without handling them, so retries, back-off, the dead-letter store and redrive are exercised. Nothing in AWS reads these.
 */
export function faultInjecting(queue: string, handler: WorkerHandler): WorkerHandler {
  const rate = Number(process.env.LOCAL_FAULT_RATE ?? 0);
  if (process.env.LOCAL_FAULT_QUEUE !== queue || !(rate > 0)) return handler;
  return async (event) => {
    const failed = event.Records.filter((r) => failing(r.messageId, rate));
    const kept = event.Records.filter((r) => !failed.includes(r));
    const res = kept.length ? await handler({ Records: kept }) : undefined;
    return { batchItemFailures: [...failed.map((r) => ({ itemIdentifier: r.messageId })), ...(res?.batchItemFailures ?? [])] };
  };
}
