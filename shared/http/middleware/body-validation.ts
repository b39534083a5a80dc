import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type * as z from 'zod';
import { BadRequestError, ValidationError, type ErrorDetail } from '#shared/errors.ts';
import type { ApiEvent, ApiInternal, ApiResult, BodySchema } from '#shared/http/middleware/internal.ts';

const valueAt = (root: unknown, path: PropertyKey[]) =>
  path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined), root);

function zodDetails(error: z.ZodError, input: unknown): { badRequest: boolean; details: ErrorDetail[] } {
  let badRequest = false;
  const details: ErrorDetail[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      badRequest = true;
      for (const key of issue.keys)
        details.push({ field: path ? `${path}.${key}` : key, code: 'unknown_field', message: `unknown field ${key}` });
      continue;
    }
    // A wrong JSON type is a malformed request (400); a well-typed value that breaks a rule is 422.
    // An enum given a value of another JSON type (a number for a string enum) is a wrong type too.
    const wrongType =
      issue.code === 'invalid_type' ||
      issue.code === 'invalid_union' ||
      (issue.code === 'invalid_value' && issue.values.length > 0 && typeof valueAt(input, issue.path) !== typeof issue.values[0]);
    if (wrongType) badRequest = true;
    // a schema's own rule may name its code (`params.code`, e.g. required), else zod's issue code
    const ruleCode = issue.code === 'custom' && typeof issue.params?.code === 'string' ? issue.params.code : issue.code;
    details.push({ field: path || undefined, code: wrongType ? 'invalid_type' : ruleCode, message: issue.message });
  }
  return { badRequest, details };
}

/** Validates a parsed body (an absent body is `{}`): 400 for wrong types or unknown fields; 422 for rule violations. */
export function validateBody<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { badRequest, details } = zodDetails(result.error, value);
  const message = details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ');
  throw badRequest ? new BadRequestError(message, details) : new ValidationError(message, details);
}

// NO_BODY (shared/http/no-body.ts) and with it zod are imported only when a body arrives: a route without a body
// schema (most GETs) then loads no zod at all.
const NO_BODY: BodySchema<z.ZodType> = () => import('#shared/http/no-body.ts').then((m) => m.NO_BODY);

/**
 * Puts the validated body in request.internal (`body()`, undefined for a route without a schema): checked
 * against the route's schema `schema` (an absent body is `{}` to it), or NO_BODY for a JSON body sent to a route
 * without one (any field is 400). The schema starts loading here, while the caller is read; the check runs on the
 * first call of `body()`, which the handler makes after the caller's 401 and the budget's 429, inside the
 * idempotent section (a refused body is an answer kept for replays).
 */
export const bodyValidation = (
  schema: BodySchema<z.ZodType> | undefined,
): MiddlewareObj<ApiEvent, ApiResult, Error, Context, ApiInternal> => {
  let loaded: Promise<z.ZodType> | undefined;
  const load = () => (loaded ??= (schema ?? NO_BODY)());
  return {
    name: 'bodyValidation',
    before: (request) => {
      const read = request.internal.read ?? { kind: 'none' };
      const checking = read.kind === 'json' || (read.kind === 'none' && schema) ? load() : undefined;
      checking?.catch(() => undefined); // awaited by body(); a request refused first must not leave it unhandled
      let body: Promise<unknown> | undefined;
      request.internal.body = () =>
        (body ??= (async () => {
          // No body for a route without a schema is `{}`, which NO_BODY accepts: nothing to check, nothing to load.
          const parsed = checking ? validateBody(await checking, read.kind === 'json' ? read.value : {}) : undefined;
          return schema ? parsed : undefined;
        })());
    },
  };
};
