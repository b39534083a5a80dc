/**
 * SCIM Users (RFC 7643 section 4.1) over this service's users, through the same domain commands as REST
 * (shared/domain/users/service.ts), so events, read models and webhooks follow. userName is the e-mail (unique
 * ignoring case: 409 uniqueness), name.givenName/familyName the profile's first/last name, externalId the
 * identity provider's id (indexed), active the status: `active: false` and DELETE deactivate, never delete.
 */
import type { DomainCtx } from '#shared/domain/context.ts';
import type { UserRecord } from '#shared/domain/users/entity.ts';
import { createUser, findUserByEmail, findUsersByExternalId, getUser, updateUser } from '#shared/domain/users/service.ts';
import type { UserCreate, UserUpdate } from '#shared/domain/users/decide.ts';
import { listUsers } from '#shared/domain/users/list.ts';
import { listResponse, pageOf, slice, walk } from '#shared/scim/lists.ts';
import { applyPatch, type PatchOperation } from '#shared/scim/patch.ts';
import { compare, listQuery, parseScimFilter, type ScimFilter } from '#shared/scim/query.ts';
import { projectAttributes, toScimUser, USER_URN } from '#shared/scim/resources.ts';
import type { ScimUserInput } from '#shared/schemas/bodies/scim.ts';

const FILTERABLE = ['userName', 'externalId', 'displayName'] as const;

const attributeOf = (u: UserRecord, attr: string) =>
  attr === 'userName' ? u.email : attr === 'externalId' ? u.scim_external_id : u.display_name;

/** The users a filter names: userName and externalId `eq` through their key and index, the rest by walking the list. */
async function usersMatching(ctx: DomainCtx, f: ScimFilter): Promise<UserRecord[]> {
  if (f.op === 'eq' && f.attr === 'userName') {
    const u = await findUserByEmail(ctx, f.value);
    return u ? [u] : [];
  }
  if (f.op === 'eq' && f.attr === 'externalId') return findUsersByExternalId(ctx, f.value);
  return walk(ctx, listUsers, (u) => compare(attributeOf(u, f.attr), f, f.attr === 'externalId'));
}

export async function listScimUsers(ctx: DomainCtx, pairs: Array<[string, string]>) {
  const { params, page } = listQuery(pairs);
  const raw = params.get('filter');
  const found = raw
    ? slice(await usersMatching(ctx, parseScimFilter(raw, USER_URN, FILTERABLE)), page)
    : await pageOf(ctx, listUsers, page);
  return listResponse(
    found.total,
    page,
    found.records.map((u) => projectAttributes(toScimUser(u), params)),
  );
}

/** What a SCIM user sets on the user record: a PUT or POST replaces every mapped attribute. */
function fromScim(input: ScimUserInput): Required<Pick<UserCreate, 'email' | 'display_name' | 'scim_external_id'>> & {
  names: { first_name: string | null; last_name: string | null };
  active?: boolean;
} {
  const given = input.name?.givenName || null;
  const family = input.name?.familyName || null;
  const formatted = input.name?.formatted || [given, family].filter(Boolean).join(' ');
  return {
    email: input.userName,
    display_name: input.displayName || formatted || input.userName.split('@')[0]!,
    scim_external_id: input.externalId ?? null,
    names: { first_name: given, last_name: family },
    ...(input.active !== undefined ? { active: input.active } : {}),
  };
}

export async function createScimUser(ctx: DomainCtx, input: ScimUserInput) {
  const s = fromScim(input);
  const user = await createUser(ctx, {
    email: s.email,
    display_name: s.display_name,
    ...(s.scim_external_id ? { scim_external_id: s.scim_external_id } : {}),
    profile_attributes: s.names,
    status: s.active === false ? 'inactive' : 'active',
  });
  return toScimUser(user);
}

export const getScimUser = async (ctx: DomainCtx, id: string, pairs: Array<[string, string]>) =>
  projectAttributes(toScimUser(await getUser(ctx, id)), listQuery(pairs).params);

/** The update that makes the user what `input` says; `active` left out keeps the status (RFC 7644 3.5.1 lets a service keep what it defaults). */
function replacement(input: ScimUserInput): UserUpdate {
  const s = fromScim(input);
  return {
    email: s.email,
    display_name: s.display_name,
    scim_external_id: s.scim_external_id,
    profile_attributes: s.names,
    ...(s.active !== undefined ? { status: s.active ? 'active' : 'inactive' } : {}),
  };
}

export async function replaceScimUser(ctx: DomainCtx, id: string, input: ScimUserInput) {
  await getUser(ctx, id); // 404 before anything else is judged
  return toScimUser(await updateUser(ctx, id, replacement(input)));
}

/**
 * PATCH: the operations applied by scim-patch to the user as SCIM shows it (any op letter case, Entra ID's
 * "True"/"False" strings read as booleans by the body schema), the result checked as a PUT body and written as one.
 * `validate` is the handler's check of a User body (400 invalidSyntax or invalidValue).
 */
export async function patchScimUser(ctx: DomainCtx, id: string, ops: PatchOperation[], validate: (body: unknown) => ScimUserInput) {
  const current = toScimUser(await getUser(ctx, id));
  const patched = validate(applyPatch(current, ops));
  return toScimUser(await updateUser(ctx, id, replacement(patched)));
}

/** DELETE deprovisions: the user is deactivated (status inactive); its goals, check-ins and history stay. */
export async function deactivateScimUser(ctx: DomainCtx, id: string): Promise<void> {
  await getUser(ctx, id);
  await updateUser(ctx, id, { status: 'inactive' });
}
