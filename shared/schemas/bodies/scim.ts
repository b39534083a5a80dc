import * as z from 'zod';
import { nonBlank, uuid } from '#shared/schemas/bodies/fields.ts';
import { NAME_MAX, NAME_TOO_LONG, OPERATIONS_MAX } from '#shared/scim/limits.ts';

/**
 * SCIM request bodies (RFC 7643, RFC 7644), checked by the SCIM handlers (shared/scim/). Objects are loose, unlike
 * the REST bodies: identity providers send attributes this service does not map (Entra ID's enterprise extension,
 * `meta`, `id`), and SCIM leaves a service free to ignore them. What is mapped is checked: a wrong type is 400
 * invalidSyntax, a broken rule 400 invalidValue (shared/scim/handler.ts).
 */

/**
 * Every key of a SCIM body, at any depth, is an attribute name: at most NAME_MAX characters (contract section 19),
 * else a 422 whose detail code NAME_TOO_LONG SCIM answers as 400 invalidPath (shared/scim/errors.ts). The first
 * such key is named, cut to 40 characters. Iterative: a body nested thousands deep must not overflow the stack.
 */
function namesFit(body: unknown, ctx: z.RefinementCtx): void {
  const stack: Array<{ value: unknown; path: PropertyKey[] }> = [{ value: body, path: [] }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    const entries: Array<[PropertyKey, unknown]> = Array.isArray(value) ? value.map((x, i) => [i, x]) : Object.entries(value);
    for (const [k, x] of entries) {
      if (typeof k === 'string' && k.length > NAME_MAX) {
        ctx.addIssue({
          code: 'custom',
          path: [...path, `${k.slice(0, 40)}…`],
          message: `an attribute name is ${k.length} characters long: at most ${NAME_MAX} characters`,
          params: { code: NAME_TOO_LONG },
        });
        return;
      }
      if (x !== null && typeof x === 'object') stack.push({ value: x, path: [...path, k] });
    }
  }
}

/** Entra ID sends booleans as the strings "True" and "False" in PATCH values; any letter case is read. */
export const scimBoolean = z.union([
  z.boolean(),
  z
    .string()
    .refine((s) => ['true', 'false'].includes(s.toLowerCase()), 'must be a boolean')
    .transform((s) => s.toLowerCase() === 'true'),
]);

/** An identity provider's id: kept as sent (SCIM's externalId is case-exact), bounded so it fits an index key. */
const externalId = z.string().min(1).max(256).nullable().optional();
const schemas = z.array(z.string().max(200)).max(20).optional();

export const ScimUserBody = z
  .looseObject({
    schemas,
    userName: z.email().max(320).meta({ description: "The user's e-mail address, unique in the tenant ignoring case" }),
    externalId,
    name: z
      .looseObject({
        givenName: z.string().max(2000).nullable().optional(),
        familyName: z.string().max(2000).nullable().optional(),
        formatted: z.string().max(200).nullable().optional(),
      })
      .nullable()
      .optional(),
    displayName: nonBlank(200).nullable().optional(),
    emails: z
      .array(z.looseObject({ value: z.string().max(320), type: z.string().max(50).optional(), primary: scimBoolean.optional() }))
      .max(20)
      .nullable()
      .optional()
      .meta({ description: 'Presented from userName; a different address sent here is not kept (userName is the address)' }),
    active: scimBoolean.optional().meta({ description: '`false` deactivates the user (status inactive); nothing is deleted' }),
  })
  .superRefine(namesFit)
  .meta({ id: 'ScimUserBody' });

export const ScimGroupBody = z
  .looseObject({
    schemas,
    displayName: nonBlank(200).meta({ description: "The team's name" }),
    externalId,
    members: z
      .array(z.looseObject({ value: uuid.meta({ description: 'A user id' }), display: z.string().max(400).optional() }))
      .max(1000)
      .nullable()
      .optional()
      .meta({ description: 'User ids: the team members (owners included)' }),
  })
  .superRefine(namesFit)
  .meta({ id: 'ScimGroupBody' });

export const ScimPatchBody = z
  .looseObject({
    schemas: z.array(z.string().max(200)).max(20),
    Operations: z
      .array(
        z.looseObject({
          // the spellings Okta and Entra ID send, and any other letter case (RFC 7644 reads op case-insensitively)
          op: z.union([z.enum(['add', 'remove', 'replace', 'Add', 'Remove', 'Replace']), z.string().max(20)]).meta({
            description: 'add, remove or replace, in any letter case',
          }),
          path: z.string().max(1000).optional(),
          value: z.unknown().optional(),
        }),
      )
      .min(1)
      .max(OPERATIONS_MAX),
  })
  .superRefine(namesFit)
  .meta({ id: 'ScimPatchBody' });

/** What a SCIM write route takes before its handler checks the caller and then the body against its own schema. */
export const ScimAnyBody = z.unknown();

export type ScimUserInput = z.infer<typeof ScimUserBody>;
export type ScimGroupInput = z.infer<typeof ScimGroupBody>;
