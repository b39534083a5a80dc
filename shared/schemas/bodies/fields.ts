import * as z from 'zod';

/** Request body building blocks (shared/schemas/common.ts re-exports them beside the response ones). */
export const uuid = z.string().regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'must be a uuid');
export const isoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => !Number.isNaN(Date.parse(s)) && new Date(s).toISOString().startsWith(s), 'must be a real calendar date');
export const nonBlank = (max: number) => z.string().trim().min(1, 'must not be blank').max(max, `must be at most ${max} characters`);
