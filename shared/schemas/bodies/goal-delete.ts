import * as z from 'zod';

export const GoalDeleteBody = z
  .strictObject({
    including_immediate_objectives: z.boolean().optional(),
    including_immediate_initiatives: z.boolean().optional(),
    including_immediate_key_results: z.boolean().optional(),
    delete_hierarchy: z.boolean().optional(),
  })
  .meta({
    id: 'GoalDeleteBody',
    description:
      'Soft delete (discarded_at/discarded_by_uuid). including_immediate_<kind> also discards the direct children of that kind; delete_hierarchy every descendant. All-or-nothing: refused with 422 too_many (field delete_hierarchy or the including_immediate_* flag sent) when it needs more than 100 writes, 403 when the caller cannot change one of them (a goal the caller cannot see is not named).',
  });
