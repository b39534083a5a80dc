import type { HttpMethod, Route } from '#shared/routes/types.ts';
import {
  ScimDiscoverySchema,
  ScimGroupBody,
  ScimGroupListSchema,
  ScimGroupSchema,
  ScimPatchBody,
  ScimUserBody,
  ScimUserListSchema,
  ScimUserSchema,
} from '#shared/schemas/scim.ts';

/**
 * SCIM 2.0 provisioning (contract section 17; shared/scim/): answers in application/scim+json, errors in SCIM's
 * shape (the OpenAPI document says so for every path under /scim/v2). A token with scope `scim` (a service account's, or an admin's), acting as an admin.
 */
const row = (
  method: HttpMethod,
  path: string,
  handler: string,
  table: Route['table'],
  doc: Omit<Route['doc'], 'tag' | 'extension'>,
  extra: Pick<Route, 'listEngine'> = {},
): Route => ({
  method,
  path: `/scim/v2${path}`,
  handler: `functions/scim/${handler}.ts`,
  auth: 'jwt',
  door: 'scim',
  scope: 'scim',
  table,
  doc: { ...doc, tag: 'scim', extension: true },
  ...extra,
});

export const scimRoutes: Route[] = [
  row(
    'GET',
    '/Users',
    'users-list',
    'read',
    {
      summary: 'SCIM: list users; filter eq, co or sw on userName, externalId, displayName; startIndex and count (at most 100)',
      success: { status: 200, schema: ScimUserListSchema },
    },
    { listEngine: true },
  ),
  row('POST', '/Users', 'users-create', 'write', {
    summary: 'SCIM: create a user (userName is the e-mail; 409 uniqueness when taken)',
    body: ScimUserBody,
    success: { status: 201, schema: ScimUserSchema },
  }),
  row('GET', '/Users/{id}', 'users-get', 'read', { summary: 'SCIM: get a user', success: { status: 200, schema: ScimUserSchema } }),
  row('PUT', '/Users/{id}', 'users-replace', 'write', {
    summary: 'SCIM: replace a user (active false deactivates)',
    body: ScimUserBody,
    success: { status: 200, schema: ScimUserSchema },
  }),
  row('PATCH', '/Users/{id}', 'users-patch', 'write', {
    summary: 'SCIM: patch a user (add, remove, replace in any letter case; "True"/"False" strings read as booleans)',
    body: ScimPatchBody,
    success: { status: 200, schema: ScimUserSchema },
  }),
  row('DELETE', '/Users/{id}', 'users-delete', 'write', {
    summary: 'SCIM: deprovision a user: deactivated, never deleted (goals and check-ins stay)',
    success: { status: 204, description: 'Deactivated' },
  }),
  row(
    'GET',
    '/Groups',
    'groups-list',
    'read',
    {
      summary: 'SCIM: list groups (teams); filter eq, co or sw on displayName, externalId; startIndex and count',
      success: { status: 200, schema: ScimGroupListSchema },
    },
    { listEngine: true },
  ),
  row('POST', '/Groups', 'groups-create', 'write', {
    summary: 'SCIM: create a group (a team with these members)',
    body: ScimGroupBody,
    success: { status: 201, schema: ScimGroupSchema },
  }),
  row('GET', '/Groups/{id}', 'groups-get', 'read', { summary: 'SCIM: get a group', success: { status: 200, schema: ScimGroupSchema } }),
  row('PUT', '/Groups/{id}', 'groups-replace', 'write', {
    summary: 'SCIM: replace a group (name, external id, members)',
    body: ScimGroupBody,
    success: { status: 200, schema: ScimGroupSchema },
  }),
  row('PATCH', '/Groups/{id}', 'groups-patch', 'write', {
    summary: 'SCIM: patch a group (members add and remove, displayName)',
    body: ScimPatchBody,
    success: { status: 200, schema: ScimGroupSchema },
  }),
  row('DELETE', '/Groups/{id}', 'groups-delete', 'write', {
    summary: 'SCIM: delete a group: the team is deleted (409 while goals or active sub-teams use it)',
    success: { status: 204, description: 'Deleted' },
  }),
  row('GET', '/ServiceProviderConfig', 'service-provider-config', 'none', {
    summary: 'SCIM: what this service supports',
    success: { status: 200, schema: ScimDiscoverySchema },
  }),
  row('GET', '/ResourceTypes', 'resource-types', 'none', {
    summary: 'SCIM: the resource types (User, Group)',
    success: { status: 200, schema: ScimDiscoverySchema },
  }),
  row('GET', '/Schemas', 'schemas', 'none', {
    summary: 'SCIM: the User and Group schemas',
    success: { status: 200, schema: ScimDiscoverySchema },
  }),
];
