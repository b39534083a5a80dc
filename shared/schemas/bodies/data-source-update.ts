import * as z from 'zod';
import { dataSourceConfig } from '#shared/schemas/bodies/data-source-create.ts';
import { nonBlank } from '#shared/schemas/bodies/fields.ts';

export const DataSourceUpdateBody = z
  .strictObject({
    name: nonBlank(200).optional(),
    config: dataSourceConfig.optional().meta({
      description:
        'http_json: fields not sent keep their values; headers sent replace all stored headers ({} removes them); a url on another origin (scheme, host or port) sent without headers removes them, as header values go only to the origin they were given for (another path keeps them). Other kinds: replaces the config. The rules of the create apply (422).',
    }),
    status: z.enum(['active', 'paused']).optional().meta({
      description:
        'paused: no scheduled syncs. active (from paused or failing): scheduled again one period from now, its failures forgotten.',
    }),
  })
  .meta({ id: 'DataSourceUpdateBody' });
