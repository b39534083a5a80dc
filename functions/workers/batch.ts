import type { SQSBatchItemFailure, SQSEvent, SQSRecord } from 'aws-lambda';
import type { z } from 'zod';
import type { Log } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';

/**
 * The SQS side of every worker in this folder (not a handler itself: no route or worker row names it).
 * Each record is parsed with the queue's message schema and handed to `process`; a record whose parse or
 * processing throws is reported as a partial batch failure, so only that message is redelivered, and
 * dead-lettered after the queue's maxReceiveCount. A malformed message fails too, to land in the
 * dead-letter queue as evidence rather than vanish. The domain code only ever sees parsed messages.
 */
export interface BatchWorker<M> {
  /** What the worker does, for its log lines (`document refresh`, ...). */
  name: string;
  /**
   * The queue's message schema, imported on the first batch rather than at cold start (as a route's body
   * schema is, shared/http/api.ts BodySchema):
   * `() => import('#shared/schemas/messages/<queue>.ts').then((m) => m.…MessageSchema)`.
   */
  schema: () => Promise<z.ZodType<M>>;
  /** Handles one message; throws to have it redelivered. Returns fields for the log line. */
  process(msg: M, meta: { messageId: string; receiveCount: number }): Promise<object>;
  /** Records of a batch run concurrently (independent slow calls that must fit the timeout); default one by one. */
  concurrent?: boolean;
  log?: Pick<Log, 'info' | 'error'>;
}

/** The receive count SQS reports (1 on the first delivery). */
export const receiveCountOf = (r: SQSRecord) => Number(r.attributes?.ApproximateReceiveCount ?? 1);

export function batchHandler<M>(worker: BatchWorker<M>): WorkerHandler {
  let schema: Promise<z.ZodType<M>> | undefined;
  const schemaOf = () => (schema ??= worker.schema());
  return async (event: SQSEvent) => {
    const failures: SQSBatchItemFailure[] = [];
    const handle = async (record: SQSRecord) => {
      const meta = { messageId: record.messageId, receiveCount: receiveCountOf(record) };
      const logged = { message_id: meta.messageId, receive_count: meta.receiveCount };
      try {
        const out = await worker.process((await schemaOf()).parse(JSON.parse(record.body)), meta);
        worker.log?.info(worker.name, { ...logged, ...out });
      } catch (err) {
        worker.log?.error(`${worker.name} failed`, { ...logged, error: (err as Error).message });
        failures.push({ itemIdentifier: record.messageId });
      }
    };
    if (worker.concurrent) await Promise.all(event.Records.map(handle));
    else for (const record of event.Records) await handle(record);
    return { batchItemFailures: failures };
  };
}
