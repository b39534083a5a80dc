import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * How a local stack keeps up, written by the stack every second to DATA_DIR/stack-stats.<pid>.json, so a run that
 * starts the stack as a process (the chaos run, the soak) can print and bound it across the stack's restarts: the
 * change stream's longest lag so far (commit to delivery) and each queue's messages and the age of its oldest.
 */
export interface StackStats {
  at: number;
  stream: { delivered: number; maxLagMs: number; maxLagAt: string };
  queues: Record<string, { pending: number; inFlight: number; oldestAgeMs: number }>;
}

const PREFIX = 'stack-stats.';

export function writeStackStats(dataDir: string, stats: StackStats): void {
  const file = join(dataDir, `${PREFIX}${process.pid}.json`);
  writeFileSync(`${file}.tmp`, JSON.stringify(stats));
  renameSync(`${file}.tmp`, file);
}

/** The latest stats of every stack process that ran over `dataDir`, oldest process first. */
export function readStackStats(dataDir: string): StackStats[] {
  const out: StackStats[] = [];
  for (const f of readdirSync(dataDir)) {
    if (!f.startsWith(PREFIX) || !f.endsWith('.json')) continue;
    try {
      out.push(JSON.parse(readFileSync(join(dataDir, f), 'utf8')) as StackStats);
    } catch {
      // being replaced (write, then rename): read at the next look
    }
  }
  return out.sort((a, b) => a.at - b.at);
}
