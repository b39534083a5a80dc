import * as z from 'zod';
import { LEVELS } from '#shared/domain/sharing/types.ts';

/** Access levels as the sharing bodies take them (grant.ts, access-request.ts); the response schemas (shared/schemas/sharing.ts) use `level` too. */
export const level = z.enum(LEVELS).meta({ description: 'Access level; ordered view < comment < edit < manage' });
/**
 * A level in a request body: a non-string is a wrong JSON type (400) and a string outside the levels breaks a
 * rule (422); a bare z.enum reports both as invalid_value, which the error mapping would make a 422.
 */
export const levelInput = z
  .string()
  .pipe(level)
  .meta({ description: 'view, comment, edit or manage (ordered)', enum: [...LEVELS] });
export const levelOrNullInput = z
  .string()
  .nullable()
  .pipe(level.nullable())
  .meta({ description: 'view, comment, edit or manage (ordered); null revokes', enum: [...LEVELS, null] });
