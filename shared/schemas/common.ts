import * as z from 'zod';

/** Shared zod building blocks. Objects are strict: an unknown field is a 400 naming it (contract section 1). */
export const checks = z.record(z.string(), z.boolean());
export const accessSource = z.enum(['admin', 'owner', 'creator', 'delegate', 'team', 'visible_entity', 'public']);
export const pagy = z.object({
  page: z.number(),
  per_page: z.number(),
  offset: z.number(),
  next: z.number().nullable(),
  prev: z.number().nullable(),
  count: z.number().optional(),
  next_cursor: z.string().nullable().meta({
    description: 'Where the next page starts: send it as `cursor` (opaque; bound to the list, its filters and sort); null on the last page',
  }),
});

export const recordEnvelope = <T extends z.ZodType>(type: string, record: T) =>
  z.object({ data: z.object({ type: z.literal(type), record, checks, access_source: accessSource }) });
export const listEnvelope = <T extends z.ZodType>(type: string, record: T) =>
  z.object({
    data: z.object({ type: z.literal(type), records: z.array(record), pagy, checks, filters: z.record(z.string(), z.unknown()) }),
  });
