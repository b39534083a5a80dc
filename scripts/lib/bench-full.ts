/** `npm run bench -- --full`: the large seed straight into the table (issue 9 section 2). */
export async function runFullBench(_opts: { url: string; tableName: string; runAdmin: (argv: string[]) => Promise<unknown> }): Promise<void> {
  throw new Error('--full: the direct seed of 100,000 goals is not built yet (see docs/benchmarks.md)');
}
