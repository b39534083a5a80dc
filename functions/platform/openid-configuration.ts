import { json, publicHandler } from '#shared/http/api.ts';

const issuer = process.env.ISSUER_URL;
if (!issuer) throw new Error('Missing required environment variable ISSUER_URL');

export const handler = publicHandler(async () =>
  json(
    200,
    {
      issuer,
      jwks_uri: `${issuer.replace(/\/$/, '')}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: ['RS256'],
      response_types_supported: ['token'],
      subject_types_supported: ['public'],
    },
    { 'cache-control': 'public, max-age=300' },
  ),
);
