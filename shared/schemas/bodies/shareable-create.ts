import * as z from 'zod';
import { MAX_CONTENT_LENGTH } from '#shared/domain/sharing/entity.ts';
import { nonBlank } from '#shared/schemas/bodies/fields.ts';

export const ShareableCreateBody = z
  .strictObject({ title: nonBlank(200), content: z.string().max(MAX_CONTENT_LENGTH).nullable().optional() })
  .meta({ id: 'ShareableCreateBody', description: 'The caller becomes the owner.' });
