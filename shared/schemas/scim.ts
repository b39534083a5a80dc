import * as z from 'zod';

/** SCIM response bodies (RFC 7643, RFC 7644) as shared/scim/ presents them, for the OpenAPI document. */
export { ScimGroupBody, ScimPatchBody, ScimUserBody } from '#shared/schemas/bodies/scim.ts';

const meta = z.object({
  resourceType: z.string(),
  created: z.string(),
  lastModified: z.string(),
  // RFC 7643 section 3.1: the resource's URI, absolute
  location: z.url({ protocol: /^https?$/ }),
  version: z.string(),
});

export const ScimUserSchema = z
  .object({
    schemas: z.array(z.string()),
    id: z.string(),
    externalId: z.string().optional(),
    userName: z.string(),
    name: z.object({ givenName: z.string().optional(), familyName: z.string().optional(), formatted: z.string().optional() }),
    displayName: z.string(),
    emails: z.array(z.object({ value: z.string(), type: z.string(), primary: z.boolean() })),
    active: z.boolean(),
    meta,
  })
  .partial({ name: true, displayName: true, emails: true, active: true, userName: true, meta: true })
  .meta({ id: 'ScimUser' });

export const ScimGroupSchema = z
  .object({
    schemas: z.array(z.string()),
    id: z.string(),
    externalId: z.string().optional(),
    displayName: z.string(),
    members: z.array(z.object({ value: z.string(), display: z.string().optional(), $ref: z.url({ protocol: /^https?$/ }) })),
    meta,
  })
  .partial({ displayName: true, members: true, meta: true })
  .meta({ id: 'ScimGroup' });

const listOf = (item: z.ZodType, id: string) =>
  z
    .object({
      schemas: z.array(z.string()),
      totalResults: z.number().int(),
      startIndex: z.number().int(),
      itemsPerPage: z.number().int(),
      Resources: z.array(item),
    })
    .meta({ id });

export const ScimUserListSchema = listOf(ScimUserSchema, 'ScimUserList');
export const ScimGroupListSchema = listOf(ScimGroupSchema, 'ScimGroupList');
/** The discovery documents (RFC 7643 sections 5-7): fixed documents, described by the RFC. */
export const ScimDiscoverySchema = z.looseObject({ schemas: z.array(z.string()) }).meta({ id: 'ScimDiscovery' });

export const ScimErrorSchema = z
  .object({
    schemas: z.array(z.literal('urn:ietf:params:scim:api:messages:2.0:Error')),
    status: z.string(),
    scimType: z.string().optional(),
    detail: z.string(),
  })
  .meta({ id: 'ScimError' });
