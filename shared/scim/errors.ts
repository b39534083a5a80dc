import { AppError } from '#shared/errors.ts';
import { PROTOTYPE_KEY } from '#shared/schemas/json-input.ts';
import { NAME_TOO_LONG } from '#shared/scim/limits.ts';

/** RFC 7644 section 3.12: the SCIM error response. */
export const ERROR_URN = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimErrorBody {
  schemas: [typeof ERROR_URN];
  status: string;
  scimType?: string;
  detail: string;
}

/** A refusal SCIM names with its own `scimType` (invalidFilter, invalidPath, noTarget, ...): the code carries it. */
export class ScimRefusal extends AppError {
  constructor(status: number, scimType: string, message: string) {
    super(status, `scim:${scimType}`, message);
  }
}

export const invalidFilter = (message: string) => new ScimRefusal(400, 'invalidFilter', message);
export const invalidValue = (message: string) => new ScimRefusal(400, 'invalidValue', message);

/**
 * The SCIM answer of an error the service gives in the contract's shape: SCIM has no 422, so a broken rule is 400
 * invalidValue (a taken userName 409 uniqueness, RFC 7644 3.3); a malformed body 400 invalidSyntax, but a body key
 * naming a prototype or longer than NAME_MAX 400 invalidPath; every other status stays as it is. The contract's code and details are kept
 * in `detail`.
 */
export function scimError(
  status: number,
  code: string,
  message: string,
  details: Array<{ field?: string; code?: string; message: string }>,
): ScimErrorBody & { httpStatus: number } {
  const named = details.filter((d) => d.field && !message.includes(d.field)).map((d) => `${d.field}: ${d.message}`);
  const detail = [message, ...named].join('; ');
  const as = (httpStatus: number, scimType?: string) => ({
    httpStatus,
    schemas: [ERROR_URN] as [typeof ERROR_URN],
    status: String(httpStatus),
    ...(scimType ? { scimType } : {}),
    detail,
  });
  if (code.startsWith('scim:')) return as(status, code.slice(5));
  if (code === 'taken') return as(409, 'uniqueness');
  // a body key named __proto__, constructor or prototype (refused by the body read, shared/schemas/json-input.ts),
  // or over NAME_MAX characters (the SCIM body schemas), is a name no attribute may have: SCIM's invalidPath, as a
  // PATCH path or value key of either kind is (shared/scim/patch.ts)
  if (details.some((d) => d.code === PROTOTYPE_KEY || d.code === NAME_TOO_LONG)) return as(400, 'invalidPath');
  if (code === 'bad_request') return as(400, 'invalidSyntax');
  if (code === 'has_dependents') return as(409);
  if (status === 422) return as(400, 'invalidValue');
  return as(status);
}
