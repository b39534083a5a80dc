import type { WorkerHandler } from '#shared/queue/queue.ts';

/**
 * Fault injection for the local stack only (the chaos run): with LOCAL_FAULT_QUEUE=<queue> and
 * LOCAL_FAULT_RATE=<0..1>, that queue's worker reports about that fraction of its messages as failed without
 * handling them, so retries, back-off and the dead-letter store are exercised. Nothing in AWS reads these.
 */
export function faultInjecting(queue: string, handler: WorkerHandler): WorkerHandler {
  const rate = Number(process.env.LOCAL_FAULT_RATE ?? 0);
  if (process.env.LOCAL_FAULT_QUEUE !== queue || !(rate > 0)) return handler;
  return async (event) => {
    const failed = event.Records.filter(() => Math.random() < rate);
    const kept = event.Records.filter((r) => !failed.includes(r));
    const res = kept.length ? await handler({ Records: kept }) : undefined;
    return { batchItemFailures: [...failed.map((r) => ({ itemIdentifier: r.messageId })), ...(res?.batchItemFailures ?? [])] };
  };
}
