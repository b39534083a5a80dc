import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: route handlers are repository-relative paths. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
