import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { ReadyHeap } from '#shared/queue/ready-heap.ts';

/**
 * The queue interface every producer uses. In AWS it is SQS (queue URL from `QUEUE_URL_<NAME>`); on the
 * local stack it is the in-process LocalQueues below, with the same semantics: at-least-once delivery,
 * retries with back-off, partial batch failures, dead letter after `maxReceiveCount` receives.
 */
export interface QueueSender {
  send(queue: string, body: unknown, opts?: { delaySeconds?: number }): Promise<string>;
}

/** An SQS record as Lambda's event source mapping delivers it (the local queues and tests build them here). */
export function sqsRecord(m: {
  queue: string;
  messageId: string;
  body: unknown;
  receiveCount?: number;
  sentAt?: number;
  firstReceivedAt?: number;
}): SQSRecord {
  return {
    messageId: m.messageId,
    receiptHandle: m.messageId,
    body: typeof m.body === 'string' ? m.body : JSON.stringify(m.body),
    attributes: {
      ApproximateReceiveCount: String(m.receiveCount ?? 1),
      SentTimestamp: String(m.sentAt ?? 0),
      SenderId: 'local',
      ApproximateFirstReceiveTimestamp: String(m.firstReceivedAt ?? 0),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:local:000000000000:${m.queue}`,
    awsRegion: 'local',
  };
}

export type WorkerHandler = (event: SQSEvent) => Promise<SQSBatchResponse | void>;

/** `QUEUE_URL_<NAME>`: the variable holding a queue's URL (set by infra/stack.ts). */
export const queueUrlEnv = (queue: string) => `QUEUE_URL_${queue.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** SQS as a QueueSender; the SDK client (shared/queue/sqs.ts) is imported on the first send, not at cold start. */
export function sqsSender(client?: Pick<SQSClient, 'send'>): QueueSender {
  let sdk:
    | Promise<{ client: Pick<SQSClient, 'send'>; SendMessageCommand: typeof import('#shared/queue/sqs.ts').SendMessageCommand }>
    | undefined;
  const sqs = () =>
    (sdk ??= import('#shared/queue/sqs.ts').then((m) => ({
      client: client ?? new m.SQSClient({}),
      SendMessageCommand: m.SendMessageCommand,
    })));
  return {
    async send(queue, body, opts) {
      const url = process.env[queueUrlEnv(queue)];
      if (!url) throw new Error(`Missing required environment variable ${queueUrlEnv(queue)}`);
      const { client, SendMessageCommand } = await sqs();
      const out = await client.send(
        new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(body), DelaySeconds: opts?.delaySeconds }),
      );
      return out.MessageId!;
    },
  };
}

export interface Pending {
  id: string;
  body: string;
  receiveCount: number;
  visibleAt: number;
  sentAt: number;
}

export interface DeadLetter {
  queue: string;
  id: string;
  body: unknown;
  receiveCount: number;
  error?: string;
}

export interface LocalWorker {
  queue: string;
  maxReceiveCount: number;
  batchSize: number;
  timeoutSeconds: number;
  /** Batches at once (the worker row's maxConcurrency, as the event source runs them). */
  maxConcurrency: number;
  /** Seconds to wait for a full batch while fewer than batchSize messages are ready (the row's batch window). */
  batchWindowSeconds?: number;
  handler: () => Promise<WorkerHandler>;
}

/** The directory of messages sent from outside the running stack (redrive), taken in at its next poll. */
const INCOMING = 'incoming';

/**
 * Messages on disk, one file per message under `<dir>/<queue>/`, so a kill of the local stack loses none
 * (as SQS would not). A file is written (write, then rename: never half a message) before `send` returns and
 * rewritten on each receive; it is removed when the message is done or dead-lettered. A message sent from outside
 * the running stack (`npm run admin -- redrive`) is written to `<dir>/<queue>/incoming/` (`submit`), which the
 * stack looks into at each poll: an empty directory, not the whole queue.
 */
export class MessageFiles {
  constructor(private readonly dir: string) {}

  private queueDir(queue: string, sub?: string) {
    const d = sub ? join(this.dir, queue, sub) : join(this.dir, queue);
    mkdirSync(d, { recursive: true });
    return d;
  }

  private static write(file: string, m: Pending): void {
    writeFileSync(`${file}.tmp`, JSON.stringify(m));
    renameSync(`${file}.tmp`, file);
  }

  save(queue: string, m: Pending): void {
    MessageFiles.write(join(this.queueDir(queue), `${m.id}.json`), m);
  }

  /** A message from outside the stack: the running stack takes it in at its next poll, a stopped one at its start. */
  submit(queue: string, m: Pending): void {
    MessageFiles.write(join(this.queueDir(queue, INCOMING), `${m.id}.json`), m);
  }

  remove(queue: string, id: string): void {
    rmSync(join(this.queueDir(queue), `${id}.json`), { force: true });
  }

  /** Every stored message of the queue (at start), oldest first. */
  load(queue: string): Pending[] {
    return this.read(this.queueDir(queue)).sort((a, b) => a.sentAt - b.sentAt);
  }

  /** The messages submitted from outside since the last call, moved into the queue. */
  takeIncoming(queue: string): Pending[] {
    const incoming = this.queueDir(queue, INCOMING);
    const found = this.read(incoming);
    for (const m of found) renameSync(join(incoming, `${m.id}.json`), join(this.queueDir(queue), `${m.id}.json`));
    return found;
  }

  private read(dir: string): Pending[] {
    const out: Pending[] = [];
    for (const f of readdirSync(dir)) {
      if (!f.endsWith('.json')) continue;
      try {
        out.push(JSON.parse(readFileSync(join(dir, f), 'utf8')) as Pending);
      } catch {
        // removed between readdir and read (done meanwhile): nothing to load
      }
    }
    return out;
  }
}

/** One message in memory; `gen` tells its current entry in the ready heap from entries it has outlived. */
interface Slot {
  m: Pending;
  gen: number;
}

interface LocalQueue {
  worker?: LocalWorker;
  slots: Map<string, Slot>;
  ready: ReadyHeap<{ slot: Slot; gen: number }>;
  inFlight: number;
}

/**
 * In-process queues for the local stack and tests, with the semantics of SQS behind Lambda's event source mapping:
 * up to the worker's `maxConcurrency` batches at once, each of up to `batchSize` visible messages (waiting up to its
 * batch window for a full one); a message taken is invisible for the visibility timeout (6x the worker's); after a
 * batch, the records it did not report failed are deleted and the failed ones come back, after a back-off here
 * (`baseBackoffMs`, doubling: the local stand-in for the visibility timeout, so a test or the chaos run sees
 * retries in seconds), and are dead-lettered after `maxReceiveCount` receives. A poll costs what the ready messages
 * cost: messages wait in a heap by the time they become visible. With `dir`, messages live in files (MessageFiles)
 * and survive a kill; a message in flight when the process died is visible again at restart (its visibility
 * timeout would have run out).
 */
export class LocalQueues implements QueueSender {
  private queues = new Map<string, LocalQueue>();
  readonly deadLetters: DeadLetter[] = [];
  private timer?: NodeJS.Timeout;
  private readonly files?: MessageFiles;
  private readonly detached = AsyncLocalStorage.snapshot();

  constructor(
    private readonly opts: {
      log?: (msg: string, extra?: Record<string, unknown>) => void;
      onDeadLetter?: (d: DeadLetter) => void;
      baseBackoffMs?: number;
      pollMs?: number;
      dir?: string;
      /** Runs before a send is accepted; throws to refuse it (the local stack checks the sender's row grants the queue). */
      beforeSend?: (queue: string) => void;
    } = {},
  ) {
    if (opts.dir) this.files = new MessageFiles(opts.dir);
  }

  register(worker: LocalWorker): void {
    const q = this.queueOf(worker.queue);
    q.worker = worker;
    if (!this.files) return;
    // at start every stored message is visible now at the latest (one in flight at a kill would be by now)
    for (const m of [...this.files.load(worker.queue), ...this.files.takeIncoming(worker.queue)])
      if (!q.slots.has(m.id)) this.enqueue(q, { ...m, visibleAt: Math.min(m.visibleAt, Date.now()) });
  }

  /** The settings a queue's worker runs with (test/infra compares them with the deployed event source's). */
  settings(queue: string): Omit<LocalWorker, 'handler'> | undefined {
    const w = this.queues.get(queue)?.worker;
    if (!w) return undefined;
    const { handler: _, ...rest } = w;
    return rest;
  }

  private queueOf(name: string): LocalQueue {
    let q = this.queues.get(name);
    if (!q) this.queues.set(name, (q = { slots: new Map(), ready: new ReadyHeap(), inFlight: 0 }));
    return q;
  }

  private enqueue(q: LocalQueue, m: Pending): void {
    const slot: Slot = { m, gen: 0 };
    q.slots.set(m.id, slot);
    q.ready.push(m.visibleAt, { slot, gen: 0 });
  }

  /** The message is next visible at `at`: an entry of its own in the heap; the one it had is left to lapse. */
  private visibleAgain(q: LocalQueue, slot: Slot, at: number): void {
    slot.m.visibleAt = at;
    slot.gen++;
    q.ready.push(at, { slot, gen: slot.gen });
  }

  async send(queue: string, body: unknown, opts?: { delaySeconds?: number }): Promise<string> {
    this.opts.beforeSend?.(queue);
    const q = this.queues.get(queue);
    if (!q?.worker) throw new Error(`Unknown queue ${queue}`);
    const id = randomUUID();
    const m: Pending = {
      id,
      body: JSON.stringify(body),
      receiveCount: 0,
      visibleAt: Date.now() + (opts?.delaySeconds ?? 0) * 1000,
      sentAt: Date.now(),
    };
    this.files?.save(queue, m);
    this.enqueue(q, m);
    this.opts.log?.('queue: message sent', { queue, message_id: id });
    this.kick();
    return id;
  }

  start(): void {
    this.timer ??= setInterval(() => this.kick(true), this.opts.pollMs ?? 200);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Messages not yet deleted (waiting, delayed or in flight). */
  pending(queue: string): number {
    return this.queues.get(queue)?.slots.size ?? 0;
  }

  /**
   * Per queue: messages not yet deleted, batches in flight, and the age of the oldest message (SQS's
   * ApproximateAgeOfOldestMessage), counted from `since` at the earliest (the local stack's start: a message sent
   * before a restart did not wait for its worker while no stack ran).
   */
  stats(since = 0, now = Date.now()): Record<string, { pending: number; inFlight: number; oldestAgeMs: number }> {
    const out: Record<string, { pending: number; inFlight: number; oldestAgeMs: number }> = {};
    for (const [name, q] of this.queues) {
      let oldest = now;
      for (const { m } of q.slots.values()) if (m.sentAt < oldest) oldest = m.sentAt;
      out[name] = { pending: q.slots.size, inFlight: q.inFlight, oldestAgeMs: q.slots.size ? now - Math.max(oldest, since) : 0 };
    }
    return out;
  }

  /** Starts what batches the queues allow. `tick`: the poll timer's turn, which also takes in messages sent from outside. */
  private kick(tick = false): void {
    // Workers run in the queues' own async context, never in the sender's: in AWS they are other Lambdas, and a
    // request's async-local state (its seeded ids, shared/ids.ts) must not leak into them.
    this.detached(() => {
      for (const [name, q] of this.queues) {
        if (!q.worker) continue;
        if (tick && this.files) for (const m of this.files.takeIncoming(name)) if (!q.slots.has(m.id)) this.enqueue(q, m);
        while (q.inFlight < q.worker.maxConcurrency) {
          const batch = this.take(q, q.worker, Date.now());
          if (!batch) break;
          q.inFlight++;
          void this.run(name, q, q.worker, batch).finally(() => {
            q.inFlight--;
            this.kick();
          });
        }
      }
    });
  }

  /**
   * Up to batchSize visible messages, earliest visible first, or undefined: none visible, or fewer than a batch
   * while the first of them has waited less than the batch window (they stay in the heap).
   */
  private take(q: LocalQueue, worker: LocalWorker, now: number): Slot[] | undefined {
    const batch: Slot[] = [];
    let firstAt = now;
    while (batch.length < worker.batchSize && (q.ready.peekAt() ?? Infinity) <= now) {
      const { at, value } = q.ready.pop()!;
      if (q.slots.get(value.slot.m.id) !== value.slot || value.slot.gen !== value.gen) continue; // deleted, or visible at another time now
      if (!batch.length) firstAt = at;
      batch.push(value.slot);
    }
    if (!batch.length) return undefined;
    const windowMs = (worker.batchWindowSeconds ?? 0) * 1000;
    if (batch.length < worker.batchSize && now - firstAt < windowMs) {
      for (const slot of batch) q.ready.push(slot.m.visibleAt, { slot, gen: slot.gen });
      return undefined;
    }
    return batch;
  }

  private async run(queue: string, q: LocalQueue, worker: LocalWorker, batch: Slot[]): Promise<void> {
    const now = Date.now();
    for (const slot of batch) {
      slot.m.receiveCount += 1;
      this.visibleAgain(q, slot, now + worker.timeoutSeconds * 6 * 1000); // in flight: invisible for the visibility timeout
      this.files?.save(queue, slot.m);
    }
    let failedIds = new Set<string>();
    let error: string | undefined;
    try {
      const handler = await worker.handler();
      const event: SQSEvent = {
        Records: batch.map(({ m }) =>
          sqsRecord({ queue, messageId: m.id, body: m.body, receiveCount: m.receiveCount, sentAt: m.sentAt, firstReceivedAt: now }),
        ),
      };
      const res = await handler(event);
      failedIds = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      error = (err as Error).message;
      failedIds = new Set(batch.map(({ m }) => m.id));
    }
    for (const slot of batch) {
      const m = slot.m;
      if (q.slots.get(m.id) !== slot) continue; // taken in again from outside meanwhile: that copy is its own message
      if (!failedIds.has(m.id)) {
        q.slots.delete(m.id);
        this.files?.remove(queue, m.id);
        continue;
      }
      if (m.receiveCount >= worker.maxReceiveCount) {
        q.slots.delete(m.id);
        const dead: DeadLetter = { queue, id: m.id, body: JSON.parse(m.body), receiveCount: m.receiveCount, error };
        this.deadLetters.push(dead);
        this.opts.onDeadLetter?.(dead);
        this.files?.remove(queue, m.id); // after the dead-letter store has it
        this.opts.log?.('queue: message dead-lettered', { queue, message_id: m.id, receive_count: m.receiveCount, error });
      } else {
        const backoff = (this.opts.baseBackoffMs ?? 500) * 2 ** (m.receiveCount - 1);
        this.visibleAgain(q, slot, Date.now() + backoff);
        this.files?.save(queue, m);
        this.opts.log?.('queue: delivery failed, will retry', {
          queue,
          message_id: m.id,
          receive_count: m.receiveCount,
          retry_in_ms: backoff,
          error,
        });
      }
    }
  }
}

const LOCAL_KEY = Symbol.for('goal-tracking.localQueues');

/** Installed by the local stack so producers running in-process use LocalQueues instead of SQS. */
export function installLocalQueues(q: LocalQueues): void {
  (globalThis as Record<symbol, unknown>)[LOCAL_KEY] = q;
}

let sqs: QueueSender | undefined;

/** The sender for this process: LocalQueues on the local stack, SQS in AWS. */
export function queueSender(): QueueSender {
  const local = (globalThis as Record<symbol, unknown>)[LOCAL_KEY] as QueueSender | undefined;
  return local ?? (sqs ??= sqsSender());
}
