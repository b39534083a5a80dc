import { scimPatch, ScimError as PatchLibraryError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { ScimRefusal } from '#shared/scim/errors.ts';
import { NAME_MAX, OPERATIONS_MAX } from '#shared/scim/limits.ts';

/** One PATCH operation as the body schema lets it through (shared/schemas/bodies/scim.ts). */
export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/**
 * What every JSON value inherits: a part of a name that names one of their properties would lead scim-patch out
 * of the resource. It walks each part of a path (`navigate`: `schema[part] || (schema[part] = {})`) and of a
 * value's key (`assign`: `if (!(part in obj)) obj[part] = {}; obj = obj[part]`), so `__proto__` or
 * `constructor.prototype` reaches Object.prototype (a property added there is seen by every object of the
 * process), and `hasOwnProperty.call`, `displayName.trim.x`, `emails.push.x` or `active.valueOf.x` write onto a
 * built-in function every request of the process shares (`Object.prototype.hasOwnProperty.call` replaced by a
 * string breaks every caller of it). Freezing Object.prototype (shared/freeze-prototype.ts) stops the first, not
 * the second: the functions it holds are objects of their own. So every part is refused that any of these
 * prototypes has, own or inherited (`in`, so what a newer Node adds is covered too), and `prototype`.
 */
const INHERITED_BY_JSON_VALUES: readonly object[] = [
  Object.prototype,
  Array.prototype,
  String.prototype,
  Number.prototype,
  Boolean.prototype,
];
const isInheritedName = (part: string) => part === 'prototype' || INHERITED_BY_JSON_VALUES.some((proto) => part in proto);

/**
 * The parts scim-patch may read a name as: it splits at the last `:` (what precedes is one key: an extension's
 * URN), at periods outside a filter's quoted strings, and takes the attribute before a `[filter]`. Splitting at
 * every `.`, `:`, `[` and `]` yields each of those parts whole (none of them holds one of these characters), and
 * a few more that only a filter holds. Linear: one character class, no backtracking.
 */
const NAME_PARTS = /[.:[\]]/;

/** Why a name (a path, or a key of a value) cannot be applied, if it cannot. */
function nameProblem(name: string, what: string): string | undefined {
  // the length first: splitting costs by it
  if (name.length > NAME_MAX) return `${what} is ${name.length} characters long: an attribute name may take at most ${NAME_MAX} characters`;
  const part = name.split(NAME_PARTS).find(isInheritedName);
  if (part !== undefined) return `${what} ${JSON.stringify(name.slice(0, 80))} names ${part}, which no attribute may be called`;
  return undefined;
}

/** The first problem of an operation's path, or of any key of its value (any depth, arrays included). */
function operationProblem(op: PatchOperation): string | undefined {
  if (op.path !== undefined) {
    const problem = nameProblem(op.path, 'The path');
    if (problem) return problem;
  }
  const stack: unknown[] = [op.value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x); // not push(...v): a 1 MiB body holds arrays longer than a call's arguments may be
      continue;
    }
    for (const [k, x] of Object.entries(v)) {
      const problem = nameProblem(k, 'The value key');
      if (problem) return problem;
      stack.push(x);
    }
  }
  return undefined;
}

/**
 * Applies RFC 7644 section 3.5.2 operations with scim-patch to a copy of `resource`. Before scim-patch sees
 * anything: more than OPERATIONS_MAX operations is 400 invalidValue; a path or value key longer than NAME_MAX,
 * or with a part any JSON value inherits (`__proto__`, `constructor`, `prototype`, `toString`, `push`, ...), is
 * 400 invalidPath; an op other than add, remove or replace (in any letter case: Entra ID sends "Replace") is 400
 * invalidSyntax. One refused operation refuses the PATCH: none is applied. scim-patch's own refusals keep their
 * scimType (invalidSyntax, invalidPath, noTarget, invalidValue) as 400.
 *
 * RFC 7644 section 3.12 has no scimType for too many operations: `tooMany` is a filter's ("yields many more
 * results than the server is willing to calculate or process", a search's answer), and PATCH has no
 * `maxOperations` (that is Bulk's, answered 413). The operations are a value the request may not hold
 * ("not compatible with the operation"), so invalidValue, as the body schema's own limit answers. A name too
 * long, or one that names a prototype, is "the path attribute was invalid": invalidPath, for a value's key
 * too (a key of a value without a path is an attribute path, section 3.5.2.1).
 */
export function applyPatch<T extends object>(resource: T, ops: PatchOperation[]): Record<string, unknown> {
  if (ops.length > OPERATIONS_MAX)
    throw new ScimRefusal(400, 'invalidValue', `A PATCH holds at most ${OPERATIONS_MAX} operations; this one holds ${ops.length}`);
  for (const op of ops) {
    const problem = operationProblem(op);
    if (problem) throw new ScimRefusal(400, 'invalidPath', problem);
    const lower = op.op.toLowerCase();
    if (lower !== 'add' && lower !== 'remove' && lower !== 'replace')
      throw new ScimRefusal(400, 'invalidSyntax', `Unknown PATCH op ${JSON.stringify(op.op.slice(0, 20))}: add, remove or replace`);
  }
  const copy = structuredClone(resource) as unknown as ScimResource;
  try {
    const normalised = ops.map((op) => ({ ...op, op: op.op.toLowerCase() })) as ScimPatchOperation[];
    return scimPatch(copy, normalised, { mutateDocument: true, treatMissingAsAdd: true }) as unknown as Record<string, unknown>;
  } catch (err) {
    if (err instanceof PatchLibraryError) throw new ScimRefusal(400, err.scimCode ?? 'invalidValue', err.message);
    // scim-patch walks what the client sent: anything it throws on is the request's fault, not the service's (a
    // TypeError: a part under a string; a RangeError: a value nested past the stack in its deep comparison)
    if (err instanceof TypeError || err instanceof RangeError)
      throw new ScimRefusal(400, 'invalidValue', 'The PATCH operations do not apply to this resource');
    throw err;
  }
}
