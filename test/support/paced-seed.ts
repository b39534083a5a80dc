import { afterStreamPasses, markerApplied } from './stream-marker.ts';

/** Goals a paced seed writes at a time: a few seconds of the local stream's work. */
const SEED_CHUNK = 400;

/**
 * Writes a large seed straight into the table a chunk at a time, paced by the change stream: a chunk is written
 * once the stream has reached the end of the chunk before the last (a marker written after it is applied), so the
 * stream has at most about two chunks to work through and is never left idle. Unpaced, 10,000 goals written at
 * once (about twenty times what API clients can write here) put the local stream minutes behind; paced, it stays
 * within seconds, so the scale lane holds the 30 s lag bound of every other lane (test/setup/global.ts). When it
 * returns, the stream has applied the whole seed (afterStreamPasses).
 */
export async function pacedByStream<T>(items: T[], write: (chunk: T[]) => Promise<void>): Promise<void> {
  let reached: Promise<void> = Promise.resolve();
  for (let i = 0; i < items.length; i += SEED_CHUNK) {
    await write(items.slice(i, i + SEED_CHUNK));
    await reached;
    reached = markerApplied();
    reached.catch(() => {}); // awaited on the next turn (which throws it), not unhandled while the next chunk is written
  }
  await reached;
  await afterStreamPasses();
}
