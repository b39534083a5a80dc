import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';

/** The dead-letter store's name for change-stream records (scripts/lib/redrive.ts applies them again). */
export const STREAM_DEAD_LETTER_QUEUE = 'table-stream';

/**
 * The local stand-in for Lambda's DynamoDB Streams event source mapping: reads DynamoDB Local's stream of the
 * table and calls the processor handler (functions/stream/processor.ts, the same code as in AWS) with Lambda's
 * event shape, honouring its partial batch response like the mapping does: everything before the first failed
 * record is checkpointed, the rest is delivered again after a back-off, and a record that still fails after
 * `maxAttempts` goes to the dead-letter file (the on-failure destination) and the shard moves on.
 *
 * Shard positions are checkpointed in a file (DATA_DIR/stream-checkpoint.json) after each delivered batch, so
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
  private attempts = new Map<string, number>();
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  /** Records handed to the processor since start (for tests and the chaos report). */
  delivered = 0;
  /**
   * The longest a record waited between its commit and its delivery, and when (the test suite prints it). An
   * upper bound: DynamoDB Local truncates a record's creation time to the minute (AWS keeps it to the
   * millisecond), so a record is taken as committed no earlier than that, nor than the last read that found its
   * shard caught up (`caughtUpAt`).
   */
  maxLag = { ms: 0, at: '' };
  /** Per shard, when the last read that returned nothing was sent: later records were committed after it. */
  private caughtUpAt = new Map<string, number>();
  /** Passes begun so far, and who waits for empty ones (whenIdle): `from` the pass running when it asked, `need` empty passes in a row. */
  private passes = 0;
  private idleWaiters: Array<{ from: number; need: number; resolve: () => void }> = [];

  constructor(private readonly opts: StreamPollerOptions) {
    this.client = new DynamoDBStreamsClient({
      endpoint: opts.endpoint,
      region: 'local',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const saved = existsSync(opts.checkpointFile) ? (JSON.parse(readFileSync(opts.checkpointFile, 'utf8')) as Checkpoint) : undefined;
    // A checkpoint of another stream (the table was re-created) means nothing here.
    this.checkpoint = saved?.streamArn === opts.streamArn ? saved : { streamArn: opts.streamArn, shards: {} };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
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
        this.opts.log?.('stream: poll failed, will retry', { error: (err as Error).message });
      }
      // a pass already running when a waiter asked does not count for it; a busy one starts its count again
      for (const w of this.idleWaiters) if (pass > w.from) w.need = busy ? 2 : w.need - 1;
      for (const w of this.idleWaiters.filter((x) => x.need <= 0)) w.resolve();
      this.idleWaiters = this.idleWaiters.filter((x) => x.need > 0);
      if (!busy && this.running) await new Promise<void>((r) => ((this.wake = r), setTimeout(r, this.opts.idleMs ?? 100)));
    }
  }

  /** One pass over every open shard; true when any records were delivered. */
  private async pollOnce(): Promise<boolean> {
    const shards = (await this.client.send(new DescribeStreamCommand({ StreamArn: this.opts.streamArn }))).StreamDescription?.Shards ?? [];
    let busy = false;
    for (const shard of shards) {
      const id = shard.ShardId!;
      const cp = (this.checkpoint.shards[id] ??= {});
      if (cp.closed) continue;
      // A child shard waits until its parent is read to its end: changes of one item stay in order.
      if (shard.ParentShardId && this.checkpoint.shards[shard.ParentShardId] && !this.checkpoint.shards[shard.ParentShardId]!.closed)
        continue;
      busy = (await this.readShard(id, cp)) || busy;
    }
    return busy;
  }

  private async iterator(shardId: string, cp: { after?: string }): Promise<string | undefined> {
    const out = await this.client.send(
      new GetShardIteratorCommand({
        StreamArn: this.opts.streamArn,
        ShardId: shardId,
        ...(cp.after ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: cp.after } : { ShardIteratorType: 'TRIM_HORIZON' }),
      }),
    );
    return out.ShardIterator;
  }

  private async readShard(shardId: string, cp: { after?: string; closed?: boolean }): Promise<boolean> {
    const it = this.iterators.has(shardId) ? this.iterators.get(shardId) : await this.iterator(shardId, cp);
    if (!it) return false;
    let out;
    const asked = Date.now();
    try {
      out = await this.client.send(new GetRecordsCommand({ ShardIterator: it, Limit: this.opts.batchSize ?? 100 }));
    } catch (err) {
      if (!(err instanceof ExpiredIteratorException)) throw err;
      this.iterators.delete(shardId);
      return false;
    }
    const read = out.Records ?? [];
    if (read.length === 0) {
      this.caughtUpAt.set(shardId, asked);
      this.iterators.set(shardId, out.NextShardIterator);
      if (!out.NextShardIterator) {
        cp.closed = true; // a closed shard read to its end
        this.save();
      }
      return false;
    }
    // As Lambda's event filter does: dropped records take no room in a batch and are passed as done.
    const records = this.opts.skip ? read.filter((r) => !this.opts.skip!(r)) : read;
    if (records.length === 0) {
      cp.after = read[read.length - 1]!.dynamodb!.SequenceNumber;
      this.save();
      this.iterators.set(shardId, out.NextShardIterator);
      return true;
    }
    const event: DynamoDBStreamEvent = { Records: records.map((r) => lambdaRecord(r, this.opts.streamArn)) };
    const lag = Date.now() - Math.max(event.Records[0]!.dynamodb!.ApproximateCreationDateTime! * 1000, this.caughtUpAt.get(shardId) ?? 0);
    if (lag > this.maxLag.ms) this.maxLag = { ms: Math.round(lag), at: new Date().toISOString() };
    let failedFrom = -1;
    let error: string | undefined;
    try {
      const res = await (await this.opts.handler())(event);
      const failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      failedFrom = event.Records.findIndex((r) => failed.has(r.dynamodb!.SequenceNumber!));
    } catch (err) {
      error = (err as Error).message;
      failedFrom = 0;
    }
    this.delivered += records.length;
    const done = failedFrom < 0 ? records : records.slice(0, failedFrom);
    if (failedFrom >= 0) {
      const record = event.Records[failedFrom]!;
      const seq = record.dynamodb!.SequenceNumber!;
      const attempts = (this.attempts.get(seq) ?? 0) + 1;
      this.attempts.set(seq, attempts);
      if (attempts >= (this.opts.maxAttempts ?? 3)) {
        // The on-failure destination: the record is kept for an operator (`npm run admin -- redrive`) and the shard moves on.
        appendFileSync(
          this.opts.deadLetterFile,
          `${JSON.stringify({ queue: STREAM_DEAD_LETTER_QUEUE, id: record.eventID, body: record, receiveCount: attempts, error })}\n`,
        );
        this.opts.log?.('stream: record dead-lettered', { event_id: record.eventID, sequence_number: seq, attempts, error });
        this.attempts.delete(seq);
        done.push(records[failedFrom]!);
      } else {
        this.opts.log?.('stream: record failed, will retry', { event_id: record.eventID, sequence_number: seq, attempts, error });
      }
    }
    if (done.length) {
      // all done: past the last record read, dropped ones included
      cp.after = (failedFrom < 0 ? read[read.length - 1]! : done[done.length - 1]!).dynamodb!.SequenceNumber;
      this.save();
    }
    if (failedFrom < 0) this.iterators.set(shardId, out.NextShardIterator);
    else {
      // Deliver again from the first record not done, after a back-off.
      this.iterators.delete(shardId);
      if (done.length < records.length)
        await new Promise((r) => setTimeout(r, 200 * (this.attempts.get(records[done.length]!.dynamodb!.SequenceNumber!) ?? 1)));
    }
    return true;
  }
}
