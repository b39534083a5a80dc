import * as z from 'zod';
import { REQUEST_SOURCES } from '#shared/domain/integrations/entity.ts';
import { nonBlank } from '#shared/schemas/bodies/fields.ts';

export const requestSource = z.enum(REQUEST_SOURCES);
/** A non-string is a wrong JSON type (400) and an unknown string breaks a rule (422); a bare z.enum would make both 422. */
const requestSourceInput = z
  .string()
  .nullable()
  .pipe(requestSource.nullable())
  .meta({
    description: 'catalog (picked from the connector catalog) or by_name (typed by the user); absent or null when unknown',
    enum: [...REQUEST_SOURCES, null],
  });

export const ConnectorRequestCreateBody = z
  .strictObject({
    connection_type: nonBlank(200).meta({
      description: 'Connector key or free-form name. Requests are one per tenant and name, ignoring case and repeated whitespace.',
    }),
    connector_display_name: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .meta({ description: 'Defaults to connection_type when absent or blank.' }),
    request_source: requestSourceInput.optional(),
  })
  .meta({
    id: 'ConnectorRequestCreateBody',
    description: "No other fields (400 naming them). The workspace is always the caller's tenant.",
  });
