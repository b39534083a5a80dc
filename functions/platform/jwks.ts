import { configuredIssuer } from '#shared/auth/issuer.ts';
import { json, publicHandler } from '#shared/http/api.ts';

const issuer = configuredIssuer();

export const handler = publicHandler(async () => json(200, await (await issuer).jwks(), { 'cache-control': 'public, max-age=300' }));
