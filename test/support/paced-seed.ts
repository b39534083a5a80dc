import { afterStreamPasses } from './stream-marker.ts';

/** Goals a paced seed writes before it waits for the change stream: a few seconds of the local stream's work. */
export const SEED_CHUNK = 500;

/**
 * Writes a large seed straight into the table a chunk at a time, each applied by the change stream before the next
 * is written. Unpaced, 10,000 goals written at once (about twenty times what API clients can write here) put the
 * local stream minutes behind; paced, it stays within seconds, so the scale lane holds the 30 s lag bound of every
 * other lane (test/setup/global.ts), and the seed is in place, derived state included, when it returns.
 */
export async function pacedByStream<T>(items: T[], write: (chunk: T[]) => Promise<void>, chunk = SEED_CHUNK): Promise<void> {
  for (let i = 0; i < items.length; i += chunk) {
    await write(items.slice(i, i + chunk));
    await afterStreamPasses();
  }
}
