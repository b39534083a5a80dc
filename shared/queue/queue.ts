import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

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
  handler: () => Promise<WorkerHandler>;
}

/**
 * Messages on disk, one file per message under `<dir>/<queue>/`, so a kill of the local stack loses none
 * (as SQS would not). A file is written (write, then rename: never half a message) before `send` returns and
 * rewritten on each receive; it is removed when the message is done or dead-lettered. Files that appear from
 * outside (`npm run admin -- redrive`) are picked up on the next poll.
 */
export class MessageFiles {
  constructor(private readonly dir: string) {}

  private queueDir(queue: string) {
    const d = join(this.dir, queue);
    mkdirSync(d, { recursive: true });
    return d;
  }

  save(queue: string, m: Pending): void {
    const file = join(this.queueDir(queue), `${m.id}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify(m));
    renameSync(`${file}.tmp`, file);
  }

  remove(queue: string, id: string): void {
    rmSync(join(this.queueDir(queue), `${id}.json`), { force: true });
  }

  /** Every stored message of the queue not among `known`. */
  load(queue: string, known: Set<string>): Pending[] {
    const out: Pending[] = [];
    for (const f of readdirSync(this.queueDir(queue))) {
      if (!f.endsWith('.json') || known.has(f.slice(0, -5))) continue;
      try {
        out.push(JSON.parse(readFileSync(join(this.queueDir(queue), f), 'utf8')) as Pending);
      } catch {
        // removed between readdir and read (done meanwhile): nothing to load
      }
    }
    return out.sort((a, b) => a.sentAt - b.sentAt);
  }
}

/**
 * In-process queues for the local stack and tests, with SQS semantics. With `dir`, messages live in files
 * (MessageFiles) and survive a kill; a message in flight when the process died is visible again at restart
 * (its visibility timeout would have run out).
 */
export class LocalQueues implements QueueSender {
  private queues = new Map<string, Pending[]>();
  private workers = new Map<string, LocalWorker>();
  readonly deadLetters: DeadLetter[] = [];
  private timer?: NodeJS.Timeout;
  private busy = new Set<string>();
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
    this.workers.set(worker.queue, worker);
    this.queues.set(worker.queue, this.queues.get(worker.queue) ?? []);
    this.adopt(worker.queue, true);
  }

  /** Takes in the queue's stored messages not yet in memory (at start: all, made visible now). */
  private adopt(queue: string, atStart = false): void {
    if (!this.files) return;
    const list = this.queues.get(queue)!;
    const found = this.files.load(queue, new Set(list.map((m) => m.id)));
    for (const m of found) list.push(atStart ? { ...m, visibleAt: Math.min(m.visibleAt, Date.now()) } : m);
  }

  async send(queue: string, body: unknown, opts?: { delaySeconds?: number }): Promise<string> {
    this.opts.beforeSend?.(queue);
    const list = this.queues.get(queue);
    if (!list) throw new Error(`Unknown queue ${queue}`);
    const id = randomUUID();
    const m: Pending = {
      id,
      body: JSON.stringify(body),
      receiveCount: 0,
      visibleAt: Date.now() + (opts?.delaySeconds ?? 0) * 1000,
      sentAt: Date.now(),
    };
    this.files?.save(queue, m);
    list.push(m);
    this.opts.log?.('queue: message sent', { queue, message_id: id });
    this.kick();
    return id;
  }

  start(): void {
    this.timer ??= setInterval(() => this.kick(), this.opts.pollMs ?? 200);
    this.timer.unref?.();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  pending(queue: string): number {
    return this.queues.get(queue)?.length ?? 0;
  }

  private kick(): void {
    // Workers run in the queues' own async context, never in the sender's: in AWS they are other Lambdas, and a
    // request's async-local state (its seeded ids, shared/ids.ts) must not leak into them.
    this.detached(() => {
      for (const [queue, worker] of this.workers) if (!this.busy.has(queue)) void this.poll(queue, worker);
    });
  }

  private async poll(queue: string, worker: LocalWorker): Promise<void> {
    const list = this.queues.get(queue)!;
    this.adopt(queue);
    const now = Date.now();
    const batch = list.filter((m) => m.visibleAt <= now).slice(0, worker.batchSize);
    if (batch.length === 0) return;
    this.busy.add(queue);
    for (const m of batch) {
      m.receiveCount += 1;
      m.visibleAt = now + worker.timeoutSeconds * 6 * 1000; // in flight: invisible for the visibility timeout
      this.files?.save(queue, m);
    }
    let failedIds = new Set<string>();
    let error: string | undefined;
    try {
      const handler = await worker.handler();
      const event: SQSEvent = {
        Records: batch.map((m) =>
          sqsRecord({ queue, messageId: m.id, body: m.body, receiveCount: m.receiveCount, sentAt: m.sentAt, firstReceivedAt: now }),
        ),
      };
      const res = await handler(event);
      failedIds = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      error = (err as Error).message;
      failedIds = new Set(batch.map((m) => m.id));
    }
    for (const m of batch) {
      if (!failedIds.has(m.id)) {
        list.splice(list.indexOf(m), 1);
        this.files?.remove(queue, m.id);
        continue;
      }
      if (m.receiveCount >= worker.maxReceiveCount) {
        list.splice(list.indexOf(m), 1);
        const dead: DeadLetter = { queue, id: m.id, body: JSON.parse(m.body), receiveCount: m.receiveCount, error };
        this.deadLetters.push(dead);
        this.opts.onDeadLetter?.(dead);
        this.files?.remove(queue, m.id); // after the dead-letter store has it
        this.opts.log?.('queue: message dead-lettered', { queue, message_id: m.id, receive_count: m.receiveCount, error });
      } else {
        const backoff = (this.opts.baseBackoffMs ?? 500) * 2 ** (m.receiveCount - 1);
        m.visibleAt = Date.now() + backoff;
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
    this.busy.delete(queue);
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
