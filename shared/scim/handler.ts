import type * as z from 'zod';
import { isAdmin } from '#shared/auth/caller.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import { ForbiddenError } from '#shared/errors.ts';
import { apiHandler, validateBody, type ApiRequest, type ApiResult, type BodySchema } from '#shared/http/api.ts';
import { SCIM_MEDIA_TYPE } from '#shared/scim/answer.ts';

/**
 * SCIM is an admin's: a member's or viewer's token is 403. A service account's token is an admin's narrowed by
 * its scopes, so it reaches here only with scope `scim` (the routes' scope check).
 */
export function scimCallerRefusal(ctx: DomainCtx): ForbiddenError | undefined {
  return isAdmin(ctx.caller) ? undefined : new ForbiddenError("SCIM provisioning needs an admin's token");
}

/** A SCIM POST's replay gate (apiHandler's authorizeReplay): the same admin check, for the caller as it is now. */
export const scimReplayGate = ({ ctx }: { ctx: DomainCtx }) => {
  const refusal = scimCallerRefusal(ctx);
  if (refusal) throw refusal;
};

/** A SCIM answer: application/scim+json (RFC 7644 section 3.1). */
export const scimJson = (statusCode: number, body: unknown, headers: Record<string, string> = {}): ApiResult => ({
  statusCode,
  headers: { 'content-type': SCIM_MEDIA_TYPE, ...headers },
  body: JSON.stringify(body),
});

/**
 * A SCIM route's handler: the same middy chain as every authenticated route (apiHandler: transport, the caller,
 * the limiter, Idempotency-Key), an admin caller required, then the body checked against `body` (so a member
 * learns nothing from a body's errors), and every answer made SCIM's (the scim door's dialect: toScimAnswer, shared/http/pipeline.ts).
 */
export function scimHandler<S extends z.ZodType = z.ZodUndefined>(opts: {
  body?: BodySchema<S>;
  handle: (req: ApiRequest<z.infer<S>, undefined>) => Promise<ApiResult>;
  /** A POST's replay gate: scimReplayGate. */
  authorizeReplay?: typeof scimReplayGate;
}) {
  const schema = opts.body;
  return apiHandler(
    {
      // any JSON reaches the handler, which checks the caller before the body
      body: schema ? () => import('#shared/schemas/bodies/scim.ts').then((m) => m.ScimAnyBody) : undefined,
      handle: async (req) => {
        const refusal = scimCallerRefusal(req.ctx);
        if (refusal) throw refusal;
        const body = schema ? validateBody(await schema(), req.body) : undefined;
        return opts.handle({ ...req, body: body as z.infer<S> });
      },
      authorizeReplay: opts.authorizeReplay,
    },
    'scim',
  );
}
