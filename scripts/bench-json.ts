/**
 * `npm run bench:json`: what the prototype-safe, exact-number body read (readJsonBody, shared/schemas/json-input.ts)
 * costs against its floor, a plain JSON.parse of the same text, measured in the same run (issue 32: the reviver
 * cost 15-20x the floor). Prints each body's ratio, the median of interleaved rounds; not part of `scripts/dev test`
 * (a timing, not a promise): docs/benchmarks.md, "The body read".
 */
import { readJsonBody } from '#shared/schemas/json-input.ts';

const ROUNDS = Number(process.env.BENCH_JSON_ROUNDS || 7);
const ROUND_MS = Number(process.env.BENCH_JSON_ROUND_MS || 300);

const goal = {
  title: 'Grow revenue in the north region',
  time_period_uuid: '5f0c6a1e-8d55-4b59-9d1e-0c5f7c0d9a11',
  metric: { kind: 'number', start_value: 0, target_value: 120 },
  labels: ['sales', 'north'],
};
const bodies: Array<[string, string]> = [
  ['a goal create (small)', JSON.stringify(goal)],
  ['4 KB of goals', JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ ...goal, title: `${goal.title} ${i}` })))],
  ['strings (0.5 MB)', JSON.stringify({ notes: Array.from({ length: 16_000 }, (_, i) => `note number ${i} of the import`) })],
  ['numbers (1 MB)', JSON.stringify({ values: Array.from({ length: 110_000 }, (_, i) => i * 7 + 0.25) })],
  [
    "17-digit numbers (1 MB, the reviver's path)",
    `{"values":[${Array.from({ length: 55_000 }, (_, i) => `0.${String(12345678901234567n + BigInt(i))}`).join(',')}]}`,
  ],
];

/** Calls of `f` per millisecond over `ms`. */
function rate(f: () => unknown, ms: number): number {
  let n = 0;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    f();
    n++;
  }
  return n / ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const [name, text] of bodies) {
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const floor = rate(() => JSON.parse(text), ROUND_MS);
    const read = rate(() => {
      try {
        readJsonBody(text);
      } catch {
        // a 17-digit body is refused (422): the cost of finding that out is what is measured
      }
    }, ROUND_MS);
    ratios.push(floor / read);
  }
  const kb = (Buffer.byteLength(text) / 1024).toFixed(1);
  console.log(
    `${name.padEnd(50)} ${kb.padStart(8)} KB  readJsonBody / JSON.parse: ${median(ratios).toFixed(1)}x (rounds ${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)})`,
  );
}
