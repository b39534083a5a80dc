import type { SQSEvent, SQSRecord } from 'aws-lambda';
import type { z } from 'zod';
import type { Log } from '#shared/logger.ts';
import type { WorkerHandler } from '#shared/queue/queue.ts';

/**
 * The SQS side of every worker in this folder (not a handler itself: no route or worker row names it), on
 * Powertools' batch processing. Each record is parsed with the queue's message schema and handed to
 * `process`; a record whose parse or processing throws is reported as a partial batch failure, so only that
 * message is redelivered, and dead-lettered after the queue's maxReceiveCount. A malformed message fails too,
 * to land in the dead-letter queue as evidence rather than vanish. The domain code only ever sees parsed
 * messages. A batch whose every record failed answers that list too (not Powertools' default throw), so SQS
 * and the local queue count each record's receive the same way in both cases.
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
  process(msg: M, meta: RecordMeta): Promise<object>;
  /** Records of a batch run concurrently (independent slow calls that must fit the timeout); default one by one. */
  concurrent?: boolean;
  /**
   * Where order matters within a batch: records of one lane (e.g. deliveries to one endpoint) run one after
   * another in the batch's order, lanes at once. Each record's `meta.lane` is shared by its lane in this batch.
   */
  laneOf?: (msg: M) => string;
  log?: Pick<Log, 'info' | 'error'>;
}

/** What a lane's records share within one batch: when it started, and a reason its later records should wait (set by `process`). */
export interface Lane {
  startedAt: number;
  held?: string;
}

export interface RecordMeta {
  messageId: string;
  receiveCount: number;
  /** The record's lane in this batch (a lane of its own without `laneOf`). */
  lane: Lane;
}

/** The receive count SQS reports (1 on the first delivery). */
export const receiveCountOf = (r: SQSRecord) => Number(r.attributes?.ApproximateReceiveCount ?? 1);

export function batchHandler<M>(worker: BatchWorker<M>): WorkerHandler {
  // the schema and Powertools' batch module load with the first batch, not at cold start
  let schema: Promise<z.ZodType<M>> | undefined;
  const schemaOf = () => (schema ??= worker.schema());
  const handle = async (record: SQSRecord, msg: () => M, lane: Lane) => {
    const meta = { messageId: record.messageId, receiveCount: receiveCountOf(record), lane };
    const logged = { message_id: meta.messageId, receive_count: meta.receiveCount };
    try {
      const out = await worker.process(msg(), meta);
      worker.log?.info(worker.name, { ...logged, ...out });
    } catch (err) {
      worker.log?.error(`${worker.name} failed`, { ...logged, error: (err as Error).message });
      throw err;
    }
  };
  return async (event: SQSEvent) => {
    const [{ BatchProcessor, EventType, processPartialResponse }, parser] = await Promise.all([
      import('@aws-lambda-powertools/batch'),
      schemaOf(),
    ]);
    const parse = (r: SQSRecord) => () => parser.parse(JSON.parse(r.body));
    // Lanes of this batch: each record chained after the one before it in its lane. Powertools calls the record
    // handler for every record in the batch's order before any of them awaits, so the chains follow that order.
    const lanes = new Map<string, { lane: Lane; last: Promise<unknown> }>();
    const inLane = (record: SQSRecord) => {
      let key: string | undefined;
      try {
        key = worker.laneOf?.(parse(record)());
      } catch {
        key = undefined; // a malformed message fails in its own lane, below
      }
      if (key === undefined) return handle(record, parse(record), { startedAt: Date.now() });
      const at = lanes.get(key) ?? { lane: { startedAt: Date.now() }, last: Promise.resolve() };
      const run = at.last.then(() => handle(record, parse(record), at.lane));
      lanes.set(key, { lane: at.lane, last: run.catch(() => undefined) });
      return run;
    };
    // a processor per invocation: it keeps the batch's state, and the local stack may run two batches at once
    return processPartialResponse(event, inLane, new BatchProcessor(EventType.SQS), {
      processInParallel: !!worker.concurrent || !!worker.laneOf,
      throwOnFullBatchFailure: false,
    });
  };
}
