import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * Reads a file a route row lists in `bundleFiles`: in Lambda from the function's bundle, where the CDK
 * construct copied it at the same repository-relative path; locally from the repository itself.
 */
export function readBundledFile(repoRelativePath: string): Buffer {
  const root = process.env.LAMBDA_TASK_ROOT ?? resolve(import.meta.dirname, '..', '..');
  return readFileSync(join(root, repoRelativePath));
}
