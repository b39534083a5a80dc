import { config } from '#shared/config.ts';
import type { TeamRecord } from '#shared/domain/teams/entity.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';

/** SCIM's URNs (RFC 7643 section 8.7.1, RFC 7644 section 3). */
export const USER_URN = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_URN = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const LIST_URN = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

/**
 * The absolute URL of a SCIM resource (RFC 7643 section 3.1: meta.location is the resource's URI), from the
 * configured public base URL (shared/config.ts), never the request's Host.
 */
export const scimUrl = (path: string): string => `${config.apiBaseUrl}/scim/v2/${path}`;

const meta = (resourceType: string, path: string, r: { created_at: string; updated_at: string }) => ({
  resourceType,
  created: r.created_at,
  lastModified: r.updated_at,
  location: scimUrl(path),
  // the record's update time names its version: any write moves it
  version: `W/"${r.updated_at}"`,
});

export interface ScimUser {
  schemas: string[];
  id: string;
  externalId?: string;
  userName: string;
  name: { givenName?: string; familyName?: string; formatted?: string };
  displayName: string;
  emails: Array<{ value: string; type: string; primary: boolean }>;
  active: boolean;
  meta: ReturnType<typeof meta>;
}

/** A user as SCIM shows it: userName and the one work e-mail are the user's e-mail; active is `status: active`. */
export function toScimUser(u: UserRecord): ScimUser {
  const given = u.profile_attributes.first_name ?? undefined;
  const family = u.profile_attributes.last_name ?? undefined;
  const formatted = [given, family].filter(Boolean).join(' ');
  return {
    schemas: [USER_URN],
    id: u.uuid,
    ...(u.scim_external_id ? { externalId: u.scim_external_id } : {}),
    userName: u.email,
    name: { ...(given ? { givenName: given } : {}), ...(family ? { familyName: family } : {}), ...(formatted ? { formatted } : {}) },
    displayName: u.display_name,
    emails: [{ value: u.email, type: 'work', primary: true }],
    active: u.status === 'active',
    meta: meta('User', `Users/${u.uuid}`, u),
  };
}

export interface ScimGroup {
  schemas: string[];
  id: string;
  externalId?: string;
  displayName: string;
  members: Array<{ value: string; display?: string; $ref: string }>;
  meta: ReturnType<typeof meta>;
}

/** A team as a SCIM group: displayName is its name, members its owners and members (`users`: their records, for `display`). */
export function toScimGroup(t: TeamRecord, users: ReadonlyMap<string, UserRecord>): ScimGroup {
  const uuids = [...new Set([...t.owner_uuids, ...t.member_uuids])];
  return {
    schemas: [GROUP_URN],
    id: t.uuid,
    ...(t.scim_external_id ? { externalId: t.scim_external_id } : {}),
    displayName: t.name,
    members: uuids.map((id) => {
      const display = users.get(id)?.display_name;
      return { value: id, ...(display ? { display } : {}), $ref: scimUrl(`Users/${id}`) };
    }),
    meta: meta('Group', `Groups/${t.uuid}`, t),
  };
}

/** Attributes a client can never leave out (RFC 7643 section 7, `returned: always`). */
const ALWAYS = new Set(['id', 'schemas']);

/**
 * RFC 7644 section 3.4.2.5: `attributes` keeps only the named top-level attributes (and those always returned),
 * `excludedAttributes` leaves the named ones out (Entra ID lists groups with `excludedAttributes=members`). Names
 * are read in any letter case; sub-attributes name their parent's top level (`name.givenName` keeps `name`).
 */
export function projectAttributes<T extends object>(resource: T, query: ReadonlyMap<string, string>): Partial<T> {
  const names = (key: string) =>
    new Set(
      (query.get(key) ?? '')
        .split(',')
        .map((a) => a.trim().split(':').pop()!.split('.')[0]!.toLowerCase())
        .filter(Boolean),
    );
  const only = names('attributes');
  const excluded = names('excludedattributes');
  return Object.fromEntries(
    Object.entries(resource).filter(([k]) => {
      const key = k.toLowerCase();
      if (ALWAYS.has(key)) return true;
      if (only.size) return only.has(key);
      return !excluded.has(key);
    }),
  ) as Partial<T>;
}

/** RFC 7644 section 5 and RFC 7643 sections 5-7: what this service supports, for clients that read it (built per request: the base URL is read then). */
export const serviceProviderConfig = () => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: 100 },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [
    {
      type: 'oauthbearertoken',
      name: 'OAuth Bearer Token',
      description: "A bearer token: an admin's token (a service account's token with scope scim once service accounts land)",
      primary: true,
    },
  ],
  meta: { resourceType: 'ServiceProviderConfig', location: scimUrl('ServiceProviderConfig') },
});

const resourceType = (name: string, endpoint: string, schema: string, description: string) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
  id: name,
  name,
  endpoint,
  description,
  schema,
  meta: { resourceType: 'ResourceType', location: scimUrl(`ResourceTypes/${name}`) },
});

/** `endpoint` stays relative: RFC 7643 section 6 defines it relative to the base URL. */
export const resourceTypes = () => [
  resourceType('User', '/Users', USER_URN, "The tenant's users"),
  resourceType('Group', '/Groups', GROUP_URN, "The tenant's teams"),
];

const attr = (name: string, type: string, extra: Record<string, unknown> = {}) => ({
  name,
  type,
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...extra,
});

export const schemaDocuments = () => [
  {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: USER_URN,
    name: 'User',
    description: 'A user of the tenant',
    attributes: [
      attr('userName', 'string', { required: true, uniqueness: 'server', description: 'The e-mail address' }),
      attr('externalId', 'string', { caseExact: true }),
      attr('name', 'complex', { subAttributes: [attr('givenName', 'string'), attr('familyName', 'string'), attr('formatted', 'string')] }),
      attr('displayName', 'string'),
      attr('emails', 'complex', {
        multiValued: true,
        mutability: 'readOnly',
        description: 'The userName as the one work address',
        subAttributes: [attr('value', 'string'), attr('type', 'string'), attr('primary', 'boolean')],
      }),
      attr('active', 'boolean', { description: 'false: the user is deactivated (nothing is deleted)' }),
    ],
    meta: { resourceType: 'Schema', location: scimUrl(`Schemas/${USER_URN}`) },
  },
  {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id: GROUP_URN,
    name: 'Group',
    description: 'A team of the tenant',
    attributes: [
      attr('displayName', 'string', { required: true }),
      attr('externalId', 'string', { caseExact: true }),
      attr('members', 'complex', {
        multiValued: true,
        subAttributes: [attr('value', 'string', { mutability: 'immutable' }), attr('display', 'string', { mutability: 'readOnly' })],
      }),
    ],
    meta: { resourceType: 'Schema', location: scimUrl(`Schemas/${GROUP_URN}`) },
  },
];
