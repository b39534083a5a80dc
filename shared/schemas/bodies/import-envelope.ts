import * as z from 'zod';

/**
 * POST /imports' JSON body: `{ goals: [...] }` (rows are checked one by one by the worker, all at once). Its own
 * file: the import row schema (imports.ts) pulls in the goal schemas, which the create route does not need.
 */
export const ImportEnvelope = z.strictObject({ goals: z.array(z.unknown()) });
