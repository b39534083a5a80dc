/**
 * SCIM's input bounds (contract section 19), checked before anything reads the input: the body schemas
 * (shared/schemas/bodies/scim.ts) and the PATCH applier (shared/scim/patch.ts) both use them.
 */

/**
 * The longest attribute name: a PATCH operation's `path` (filter included), each key of its `value`, and each key
 * of any SCIM body, at any depth. scim-patch splits names with a regex whose time is quadratic in the name's
 * length (`SPLIT_PERIOD`: a lookahead that scans to the end of the name at each period; 60,000 characters took
 * 2.8 s), so a name is measured before it runs. RFC 7643's names are short: the longest a provider sends, an
 * extension's URN and an attribute (`urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber`),
 * or a member filter (`members[value eq "<uuid>"]`), is under 80 characters.
 */
export const NAME_MAX = 200;

/** The most operations one PATCH holds. */
export const OPERATIONS_MAX = 100;

/**
 * The detail code of a key over NAME_MAX in a SCIM body (a 422 of the body schema): SCIM answers it as
 * invalidPath (shared/scim/errors.ts), as a PATCH path or value key over NAME_MAX is.
 */
export const NAME_TOO_LONG = 'name_too_long';
