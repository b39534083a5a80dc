import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { deliverInLanes } from './stream-lanes.ts';

/** The dead-letter store's name for change-stream records (scripts/lib/redrive.ts applies them again). */
export const STREAM_DEAD_LETTER_QUEUE = 'table-stream';

/** Records asked of a shard per read (GetRecords' maximum), split into batches of `batchSize` after the filter. */
const READ_LIMIT = 1000;
/** Lanes of a read delivered at once by default (the mapping's ParallelizationFactor; DynamoDB Local has one shard). */
const DEFAULT_PARALLELIZATION = 4;
/** What is known of commit times kept per shard (a batch is timed against the latest mark before its first record). */
const MARKS_KEPT = 64;
/** How often the lag sampler looks at each shard's end. */
const SAMPLE_MS = 500;

/**
 * The local stand-in for Lambda's DynamoDB Streams event source mapping: reads DynamoDB Local's stream of the
 * table and calls the processor handler (functions/stream/processor.ts, the same code as in AWS) with Lambda's
 * event shape, as the mapping does: shards read in parallel (a child after its parent), each read split into
 * lanes by item key like a parallelization factor (batches of different items at once, each item in order),
 * its partial batch response honoured (delivered again from the first failed record, bisected when the
 * handler throws, after a back-off), and a record that still fails after `maxAttempts` goes to the dead-letter
 * file (the on-failure destination) while its lane moves on (scripts/lib/stream-lanes.ts).
 *
 * Shard positions are checkpointed in a file (DATA_DIR/stream-checkpoint.json) once a read is delivered in full, so
 * a restart resumes where the last run left off. DynamoDB Local with -dbPath keeps its stream records across
 * a SIGKILL and a restart (verified: same stream ARN, shard and sequence numbers), so what was committed but
 * not yet processed when the stack died is processed after the restart; a change processed but not yet
 * checkpointed is processed again, which the projections' idempotency makes harmless.
 */
export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | void>;

export interface StreamPollerOptions {
  endpoint: string;
  streamArn: string;
  checkpointFile: string;
  deadLetterFile: string;
  handler: () => Promise<StreamHandler>;
  batchSize?: number;
  /** Records the event source drops before batching (Lambda's event filter): checkpointed past, never delivered. */
  skip?: (record: _Record) => boolean;
  maxAttempts?: number;
  /** Lanes a read is delivered in at once (the event source mapping's parallelization factor, 1 to 10). */
  parallelization?: number;
  idleMs?: number;
  log?: (msg: string, extra?: Record<string, unknown>) => void;
}

interface Checkpoint {
  streamArn: string;
  /** Last sequence number done per shard; `closed` shards are read to their end. */
  shards: Record<string, { after?: string; closed?: boolean }>;
}

/** A record of the SDK's stream client in the shape Lambda hands a DynamoDB Streams handler. */
export function lambdaRecord(r: _Record, streamArn: string): DynamoDBRecord {
  const d = r.dynamodb ?? {};
  const created = d.ApproximateCreationDateTime;
  return {
    eventID: r.eventID,
    eventName: r.eventName,
    eventVersion: r.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: r.awsRegion ?? 'local',
    eventSourceARN: streamArn,
    dynamodb: {
      ApproximateCreationDateTime:
        created instanceof Date ? created.getTime() / 1000 : typeof created === 'number' ? created : Date.now() / 1000,
      Keys: d.Keys as never,
      NewImage: d.NewImage as never,
      OldImage: d.OldImage as never,
      SequenceNumber: d.SequenceNumber,
      SizeBytes: d.SizeBytes,
      StreamViewType: d.StreamViewType as never,
    },
  };
}

export class StreamPoller {
  private readonly client: DynamoDBStreamsClient;
  private checkpoint: Checkpoint;
  private iterators = new Map<string, string | undefined>();
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** Records handed to the processor since start (for tests and the chaos report). */
  delivered = 0;
  /** Passes that failed (a stream call refused or timed out) since start, and the last one's error: a stalled stream says why. */
  pollFailures = { count: 0, last: '' };
  /**
   * The longest a record waited between its commit and its delivery, and when (the test suite prints it). An
   * upper bound: DynamoDB Local truncates a record's creation time to the minute (AWS keeps it to the
   * millisecond), so a record is taken as committed no earlier than that, nor than the last read that found its
   * shard caught up or the sampler saw it (`caughtUp`), nor than the `updated_at` its writer stamped on the item
   * (a write commits after it computed it; the bound that stays tight when a loaded machine starves the sampler),
   * nor than this poller's start: a record committed while no stack ran (before a restart) counts from the start,
   * the stack's downtime not being the stream's lag.
   * `queuedMs`: how much of it the record spent read but waiting for its lane.
   */
  maxLag = { ms: 0, at: '', queuedMs: 0 };
  private startedAt = 0;
  /**
   * Per shard, what is known of when records were committed: a record after `after` was committed after `at`.
   * From reads that reached the shard's end, and from the sampler (`sample`), which keeps the bound tight while
   * the lanes are busy and no read reaches the end.
   */
  private caughtUp = new Map<string, Array<{ at: number; after: bigint }>>();
  /** Per open shard, an iterator at the shard's end as of `at` (the sampler's probe). */
  private probes = new Map<string, { at: number; it?: string }>();
  private sampler?: Promise<void>;
  /** Passes begun so far, and who waits for empty ones (whenIdle): `from` the pass running when it asked, `need` empty passes in a row. */
  private passes = 0;
  private idleWaiters: Array<{ from: number; need: number; resolve: () => void }> = [];

  constructor(private readonly opts: StreamPollerOptions) {
    this.client = new DynamoDBStreamsClient({
      endpoint: opts.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      // a call DynamoDB Local never answers fails and is made again (the loop's retry), never stalls the stream for good
      requestHandler: { connectionTimeout: 5_000, requestTimeout: 30_000 },
    });
    const saved = existsSync(opts.checkpointFile) ? (JSON.parse(readFileSync(opts.checkpointFile, 'utf8')) as Checkpoint) : undefined;
    // A checkpoint of another stream (the table was re-created) means nothing here.
    this.checkpoint = saved?.streamArn === opts.streamArn ? saved : { streamArn: opts.streamArn, shards: {} };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = Date.now();
    this.loop = this.run();
    this.sampler = this.sample();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await Promise.all([this.loop, this.sampler]);
    this.client.destroy();
  }

  private save(): void {
    writeFileSync(`${this.opts.checkpointFile}.tmp`, JSON.stringify(this.checkpoint));
    renameSync(`${this.opts.checkpointFile}.tmp`, this.opts.checkpointFile);
  }

  /**
   * Resolves once the stream has caught up: two whole passes over every shard, both begun after this call, found
   * no record (what the projections wrote while applying earlier records is delivered before that). For benches
   * and tests that measure derived state.
   */
  whenIdle(): Promise<void> {
    return new Promise((resolve) => this.idleWaiters.push({ from: this.passes, need: 2, resolve }));
  }

  private async run(): Promise<void> {
    while (this.running) {
      let busy = false;
      const pass = ++this.passes;
      try {
        busy = await this.pollOnce();
      } catch (err) {
        busy = true; // not known to be idle
        this.pollFailures = { count: this.pollFailures.count + 1, last: (err as Error).message };
        this.opts.log?.('stream: poll failed, will retry', { error: (err as Error).message });
      }
      // a pass already running when a waiter asked does not count for it; a busy one starts its count again
      for (const w of this.idleWaiters) if (pass > w.from) w.need = busy ? 2 : w.need - 1;
      for (const w of this.idleWaiters.filter((x) => x.need <= 0)) w.resolve();
      this.idleWaiters = this.idleWaiters.filter((x) => x.need > 0);
      if (!busy && this.running) await new Promise<void>((r) => ((this.wake = r), setTimeout(r, this.opts.idleMs ?? 100)));
    }
  }

  /** One pass over every open shard, the shards read in parallel as the event source does; true when any records were delivered. */
  private async pollOnce(): Promise<boolean> {
    const shards = (await this.client.send(new DescribeStreamCommand({ StreamArn: this.opts.streamArn }))).StreamDescription?.Shards ?? [];
    const reads: Promise<boolean>[] = [];
    for (const shard of shards) {
      const id = shard.ShardId!;
      const cp = (this.checkpoint.shards[id] ??= {});
      if (cp.closed) continue;
      // A child shard waits until its parent is read to its end: changes of one item stay in order.
      if (shard.ParentShardId && this.checkpoint.shards[shard.ParentShardId] && !this.checkpoint.shards[shard.ParentShardId]!.closed)
        continue;
      if (!this.probes.has(id)) this.probes.set(id, { at: Date.now() });
      reads.push(this.readShard(id, cp));
    }
    // every read settled before the next pass (none of a shard runs twice at once), the first failure reported
    const settled = await Promise.allSettled(reads);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.some((r) => r.status === 'fulfilled' && r.value);
  }

  /**
   * An iterator from the checkpoint on, or from the shard's oldest record. A checkpoint the stream has trimmed
   * (older than its retention) reads from the oldest record still there, as the event source mapping goes on.
   */
  private async iterator(shardId: string, cp: { after?: string }): Promise<string | undefined> {
    const from = (after?: string) =>
      this.client.send(
        new GetShardIteratorCommand({
          StreamArn: this.opts.streamArn,
          ShardId: shardId,
          ...(after ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after } : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
    try {
      return (await from(cp.after)).ShardIterator;
    } catch (err) {
      if (!(err instanceof TrimmedDataAccessException) || !cp.after) throw err;
      this.opts.log?.('stream: checkpoint trimmed, reading from the oldest record', { shard: shardId, after: cp.after });
      return (await from(undefined)).ShardIterator;
    }
  }

  /**
   * Reads up to READ_LIMIT records of a shard and delivers them in lanes (scripts/lib/stream-lanes.ts: batches of
   * different items concurrently, each item in order, failed batches retried then dead-lettered); the checkpoint
   * moves past the read once every lane is done.
   */
  private async readShard(shardId: string, cp: { after?: string; closed?: boolean }): Promise<boolean> {
    const it = this.iterators.has(shardId) ? this.iterators.get(shardId) : await this.iterator(shardId, cp);
    if (!it) return false;
    let out;
    const asked = Date.now();
    try {
      out = await this.client.send(new GetRecordsCommand({ ShardIterator: it, Limit: READ_LIMIT }));
    } catch (err) {
      // An iterator that expired, or that points past what the shard still holds (DynamoDB Local answered that to an
      // iterator kept across passes, every pass after, in two CI runs: the stream stalled for good), is taken again
      // from the checkpoint on the next pass.
      this.iterators.delete(shardId);
      if (err instanceof ExpiredIteratorException || err instanceof TrimmedDataAccessException) return false;
      throw err;
    }
    const read = out.Records ?? [];
    const readAt = Date.now();
    // Fewer than asked for: the read reached the shard's end (DynamoDB Local returns all it has up to the limit,
    // with no 1 MB cut), so every later record was committed after `asked` (the lag's lower bound, below).
    if (read.length < READ_LIMIT) this.mark(shardId, asked, BigInt(read.at(-1)?.dynamodb?.SequenceNumber ?? cp.after ?? '0'));
    if (read.length === 0) {
      this.iterators.set(shardId, out.NextShardIterator);
      if (!out.NextShardIterator) {
        cp.closed = true; // a closed shard read to its end
        this.probes.delete(shardId);
        this.save();
      }
      return false;
    }
    // As Lambda's event filter does: dropped records take no room in a batch and are passed as done.
    const records = this.opts.skip ? read.filter((r) => !this.opts.skip!(r)) : read;
    const done = await deliverInLanes(records, {
      keyOf: (r) => JSON.stringify(r.dynamodb?.Keys ?? r.eventID),
      seqOf: (r) => r.dynamodb!.SequenceNumber!,
      lanes: this.opts.parallelization ?? DEFAULT_PARALLELIZATION,
      batchSize: this.opts.batchSize ?? 100,
      maxAttempts: this.opts.maxAttempts ?? 3,
      running: () => this.running,
      deliver: (batch) => this.deliver(shardId, readAt, batch),
      retrying: (r, attempts, error) =>
        this.opts.log?.('stream: record failed, will retry', {
          event_id: r.eventID,
          sequence_number: r.dynamodb?.SequenceNumber,
          attempts,
          error,
        }),
      deadLetter: (r, attempts, error) => {
        // The on-failure destination: the record is kept for an operator (`npm run admin -- redrive`) and its lane moves on.
        const record = lambdaRecord(r, this.opts.streamArn);
        appendFileSync(
          this.opts.deadLetterFile,
          `${JSON.stringify({ queue: STREAM_DEAD_LETTER_QUEUE, id: record.eventID, body: record, receiveCount: attempts, error })}\n`,
        );
        this.opts.log?.('stream: record dead-lettered', {
          event_id: record.eventID,
          sequence_number: record.dynamodb?.SequenceNumber,
          attempts,
          error,
        });
      },
    });
    // Stopped half way: nothing checkpointed, the read is delivered again after a restart (idempotent projections).
    if (!done) return true;
    cp.after = read.at(-1)!.dynamodb!.SequenceNumber; // past the last record read, dropped ones included
    this.save();
    this.iterators.set(shardId, out.NextShardIterator);
    return true;
  }

  /** Records of `shardId` after sequence number `after` were committed after `at`. */
  private mark(shardId: string, at: number, after: bigint): void {
    const marks = this.caughtUp.get(shardId) ?? [];
    // a later mark at the same position says more (an idle shard's reads all end at its checkpoint)
    if (marks.at(-1)?.after === after) marks.pop();
    marks.push({ at, after });
    this.caughtUp.set(shardId, marks.slice(-MARKS_KEPT));
  }

  /**
   * Every SAMPLE_MS, per open shard: an iterator taken at the shard's end (LATEST) at `at` is read one record
   * far; the first record it finds was committed after `at`, and so was every later one. Only for the lag's
   * bound: DynamoDB Local's creation times are truncated to the minute.
   */
  private async sample(): Promise<void> {
    while (this.running) {
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
      for (const shardId of this.probes.keys()) {
        try {
          const probe = this.probes.get(shardId)!;
          if (probe.it) {
            const first = (await this.client.send(new GetRecordsCommand({ ShardIterator: probe.it, Limit: 1 }))).Records?.[0];
            if (first) this.mark(shardId, probe.at, BigInt(first.dynamodb!.SequenceNumber!) - 1n);
          }
          const at = Date.now();
          const it = (
            await this.client.send(
              new GetShardIteratorCommand({ StreamArn: this.opts.streamArn, ShardId: shardId, ShardIteratorType: 'LATEST' }),
            )
          ).ShardIterator;
          this.probes.set(shardId, { at, it });
        } catch {
          this.probes.set(shardId, { at: Date.now() }); // an expired or closed shard's iterator: taken again next time
        }
      }
    }
  }

  /** One batch to the handler: the index of its first failed record (-1: none); a throw fails all of it. */
  private async deliver(shardId: string, readAt: number, batch: _Record[]): Promise<number> {
    const event: DynamoDBStreamEvent = { Records: batch.map((r) => lambdaRecord(r, this.opts.streamArn)) };
    const first = event.Records[0]!.dynamodb!;
    // A record was committed no earlier than its (minute-truncated) creation time, nor than the last read that
    // reached the shard's end before it.
    const seq = BigInt(first.SequenceNumber!);
    const after = (this.caughtUp.get(shardId) ?? []).reduce((at, m) => (m.after < seq && m.at > at ? m.at : at), 0);
    const now = Date.now();
    const stamped = Date.parse((first.NewImage ?? first.OldImage)?.updated_at?.S ?? '') || 0;
    const lag = now - Math.max(first.ApproximateCreationDateTime! * 1000, after, stamped <= now ? stamped : 0, this.startedAt);
    if (lag > this.maxLag.ms) this.maxLag = { ms: Math.round(lag), at: new Date().toISOString(), queuedMs: Date.now() - readAt };
    this.delivered += batch.length;
    const res = await (await this.opts.handler())(event);
    const failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    return event.Records.findIndex((r) => failed.has(r.dynamodb!.SequenceNumber!));
  }
}
