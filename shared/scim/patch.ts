import { scimPatch, ScimError as PatchLibraryError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { ScimRefusal } from '#shared/scim/errors.ts';

/** One PATCH operation as the body schema lets it through (shared/schemas/bodies/scim.ts). */
export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** Names that would reach Object.prototype if a path or a value's key named them. */
const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);

/** The first prototype name among a path's attribute names, or among the keys of a value (any depth). */
function prototypeNameIn(op: PatchOperation): string | undefined {
  const inPath = (op.path ?? '').split(/[.:[\]\s"]/).find((part) => PROTOTYPE_NAMES.has(part));
  if (inPath) return inPath;
  const stack: unknown[] = [op.value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    for (const [k, x] of Object.entries(v)) {
      if (PROTOTYPE_NAMES.has(k)) return k;
      stack.push(x);
    }
  }
  return undefined;
}

/**
 * Applies RFC 7644 section 3.5.2 operations with scim-patch to a copy of `resource`. The op is read in any letter
 * case (Entra ID sends "Replace", "Add", "Remove"); a path or value naming `__proto__`, `constructor` or
 * `prototype` is refused (400 invalidPath) before scim-patch sees it; scim-patch's own refusals keep their
 * scimType (invalidSyntax, invalidPath, noTarget, invalidValue) as 400.
 */
export function applyPatch<T extends object>(resource: T, ops: PatchOperation[]): Record<string, unknown> {
  for (const op of ops) {
    const name = prototypeNameIn(op);
    if (name) throw new ScimRefusal(400, 'invalidPath', `A PATCH operation may not name ${name}`);
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
    // scim-patch walks what the client sent: anything it throws on is the request's fault, not the service's
    if (err instanceof TypeError) throw new ScimRefusal(400, 'invalidValue', 'The PATCH operations do not apply to this resource');
    throw err;
  }
}
