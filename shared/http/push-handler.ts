import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type * as z from 'zod';
import { loadSourceCreator } from '#shared/auth/load-caller.ts';
import { getEntity } from '#shared/db/reads.ts';
import { tenantDb } from '#shared/db/tenant-scope.ts';
import { dataSourceUuidOf, pushSecretMatches, tenantOfPushSecret } from '#shared/domain/integrations/data-sources.ts';
import { creatorKindOf, dataSourceEntity, SOURCE_WRITE_SCOPE, type DataSourceRecord } from '#shared/domain/integrations/entity.ts';
import { UnauthorizedError } from '#shared/errors.ts';
import { credentialBudget } from '#shared/http/credential-budget.ts';
import { bodyValidation } from '#shared/http/middleware/body-validation.ts';
import { idempotency } from '#shared/http/middleware/idempotency.ts';
import type { ApiEvent, ApiInternal, ApiResult, BodySchema, RequestCtx } from '#shared/http/middleware/internal.ts';
import { callerStages, doorPipeline, type Stage } from '#shared/http/pipeline.ts';
import { transport } from '#shared/http/transport.ts';
import { Loader } from '#shared/list/entity-cache.ts';

type PushInternal = ApiInternal & { pushSource: DataSourceRecord };

const refused = () => new UnauthorizedError('Authorization must be Bearer <push_secret> of this push data source');

/**
 * The push secret in place of the JWT (POST /data_sources/{id}/values, contract section 16): the route has no
 * gateway authorizer, so this is its whole authentication. The secret names its tenant (`dsp_<tenant>_...`); the
 * source is read in that tenant only and its secret hash compared in constant time. Whatever is wrong (no
 * secret, another source's, another tenant's, not a push source) is the same 401: nothing says a source
 * exists. A secret that names a tenant and fails spends the failed-credential budget of the source (its client
 * id) and of the tenant named, checked before the tenant's session and the read (429 with Retry-After past it;
 * shared/http/credential-budget.ts, contract section 19); nothing is charged to the tenant before the secret
 * matched. The caller is then the source's creator (sourceCreator), rate limited as any request of theirs.
 */
const pushSecretAuth = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, PushInternal> => ({
  name: 'pushSecretAuth',
  before: async (request) => {
    const m = /^Bearer\s+(\S+)$/i.exec(request.event.headers?.authorization ?? '');
    const tenantId = m ? tenantOfPushSecret(m[1]!) : undefined;
    if (!m || !tenantId) throw refused();
    let uuid: string;
    try {
      uuid = dataSourceUuidOf(tenantId, request.event.pathParameters?.id ?? '');
    } catch {
      throw refused();
    }
    const named = { tenantId, client: `ds_${uuid}` };
    credentialBudget.check(named);
    const data = { tenantId, db: await tenantDb(tenantId) };
    const source = (await getEntity(data, dataSourceEntity, uuid, true))?.record;
    if (source?.kind !== 'push' || !pushSecretMatches(source, m[1]!)) {
      await credentialBudget.failed(named);
      throw refused();
    }
    credentialBudget.proved(named);
    request.internal.data = data;
    request.internal.userId = source.creator_uuid;
    request.internal.loader = new Loader(data);
    request.internal.pushSource = source;
  },
});

/**
 * The caller's read at the push door: the source's creator as it is now, by the kind the source records (a user, or a
 * service account acting with its scopes of now, which must still allow the check-in: SOURCE_WRITE_SCOPE); 401 when
 * it can no longer write (loadSourceCreator), before the limiter charges anything.
 */
const sourceCreator = (): MiddlewareObj<ApiEvent, ApiResult, Error, Context, PushInternal> => ({
  name: 'sourceCreator',
  before: (request) => {
    const { data, pushSource } = request.internal;
    request.internal.caller = loadSourceCreator(
      data,
      { uuid: pushSource.creator_uuid, kind: creatorKindOf(pushSource) },
      SOURCE_WRITE_SCOPE,
      { readAhead: request.internal.readAhead.entities, teams: request.internal.readAhead.teams },
    );
    request.internal.caller.catch(() => undefined); // awaited by rateLimit
  },
});

/** apiHandler's chain (shared/http/pipeline.ts) at the door `push`: the push secret proves the caller in place of the token's claims. */
export function pushHandler<S extends z.ZodType>(opts: {
  body: BodySchema<S>;
  handle: (req: { ctx: RequestCtx; body: z.infer<S>; params: Record<string, string>; source: DataSourceRecord }) => Promise<ApiResult>;
}) {
  return doorPipeline<PushInternal>(
    'push',
    {
      ...callerStages<PushInternal>('push'),
      transport: transport({ withBody: true }) as Stage<PushInternal>,
      // a replay is answered only after the secret was checked again (pushSecretAuth runs before the handler)
      idempotency: idempotency({ authorizeReplay: () => undefined }) as Stage<PushInternal>,
      bodyValidation: bodyValidation(opts.body) as Stage<PushInternal>,
      credential: pushSecretAuth(),
      caller: sourceCreator(),
    },
    async (_event, { internal }) => {
      const ctx = await internal.ctx;
      return internal.respond(async () =>
        opts.handle({ ctx, body: (await internal.body()) as z.infer<S>, params: internal.params, source: internal.pushSource }),
      );
    },
  );
}
