import { createPublicKey, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { PRINCIPAL_TYPE_CLAIM, SERVICE_ACCOUNT_PRINCIPAL } from '#shared/auth/scopes.ts';
import { config } from '#shared/config.ts';

/**
 * The service's own token issuer, signing RS256: the API Gateway HTTP API JWT authorizer verifies only
 * RSA-based algorithms. Locally the RSA key pair lives in DATA_DIR; in AWS the private key is a KMS
 * asymmetric key (RSA_2048) that never leaves KMS. Both publish the same JWKS/discovery documents and sign the
 * same claims, so the JWT authorizer and the operator commands work the same way against either.
 */
export interface TokenClaims {
  tenantId: string;
  /** The subject: a user's uuid, or a service account's. */
  userId: string;
  ttlSeconds: number;
  /** Space-separated OAuth scopes (contract section 17): the JWT authorizer checks each route's against them. */
  scope?: string;
  /** Set for a service account's token (client credentials grant): its client_id. */
  clientId?: string;
}

export interface Issuer {
  issuer: string;
  audience: string;
  jwks(): Promise<{ keys: JWK[] }>;
  sign(claims: TokenClaims): Promise<{ token: string; expiresAt: string }>;
}

export const DEFAULT_AUDIENCE = 'goal-tracking-api';
export const DEFAULT_TTL_SECONDS = 3600;

/** The tenant and user claims, under the names the API reads them by (TENANT_CLAIM / USER_CLAIM), the scopes, and for a service account its marks. */
const payload = (c: TokenClaims) => ({
  [config.tenantClaim]: c.tenantId,
  [config.userClaim]: c.userId,
  ...(c.scope !== undefined ? { scope: c.scope } : {}),
  ...(c.clientId ? { [PRINCIPAL_TYPE_CLAIM]: SERVICE_ACCOUNT_PRINCIPAL, client_id: c.clientId } : {}),
});

const ALG = 'RS256';

/** Local issuer: an RSA key pair kept in a JSON file (created on first use; an older non-RSA key is replaced). */
export async function fileIssuer(keyFile: string, issuer: string, audience = DEFAULT_AUDIENCE): Promise<Issuer> {
  if (!existsSync(keyFile) || (JSON.parse(readFileSync(keyFile, 'utf8')) as JWK).kty !== 'RSA') {
    const { privateKey } = await generateKeyPair(ALG, { extractable: true, modulusLength: 2048 });
    const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: ALG, use: 'sig' };
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, JSON.stringify(jwk), { mode: 0o600 });
  }
  const priv = JSON.parse(readFileSync(keyFile, 'utf8')) as JWK;
  const pub: JWK = { kty: priv.kty, n: priv.n, e: priv.e, kid: priv.kid, alg: ALG, use: 'sig' }; // never the private parts
  const key = await importJWK(priv, ALG);
  return {
    issuer,
    audience,
    jwks: async () => ({ keys: [pub] }),
    sign: async (c) => {
      const exp = Math.floor(Date.now() / 1000) + c.ttlSeconds;
      const token = await new SignJWT(payload(c))
        .setProtectedHeader({ alg: ALG, kid: priv.kid!, typ: 'JWT' })
        .setSubject(c.userId)
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(key);
      return { token, expiresAt: new Date(exp * 1000).toISOString() };
    },
  };
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

/** AWS issuer: a KMS RSA_2048 key (RSASSA_PKCS1_V1_5_SHA_256 = RS256); only its public half is ever exported. */
export function kmsIssuer(keyId: string, issuer: string, audience = DEFAULT_AUDIENCE, client?: Pick<KMSClient, 'send'>): Issuer {
  // The SDK client (shared/auth/kms-signing.ts) is imported on first use, not at cold start.
  type Sdk = typeof import('#shared/auth/kms-signing.ts');
  let sdk:
    | Promise<{ kms: Pick<KMSClient, 'send'>; GetPublicKeyCommand: Sdk['GetPublicKeyCommand']; SignCommand: Sdk['SignCommand'] }>
    | undefined;
  const kmsSdk = () =>
    (sdk ??= import('#shared/auth/kms-signing.ts').then((m) => ({
      kms: client ?? new m.KMSClient({}),
      GetPublicKeyCommand: m.GetPublicKeyCommand,
      SignCommand: m.SignCommand,
    })));
  let jwk: Promise<JWK> | undefined;
  const publicJwk = () =>
    (jwk ??= kmsSdk()
      .then(({ kms, GetPublicKeyCommand }) => kms.send(new GetPublicKeyCommand({ KeyId: keyId })))
      .then(async (out) => {
        const pub = createPublicKey({ key: Buffer.from(out.PublicKey!), format: 'der', type: 'spki' });
        return { ...(await exportJWK(pub)), kid: out.KeyId!.split('/').pop()!, alg: ALG, use: 'sig' };
      }));
  return {
    issuer,
    audience,
    jwks: async () => ({ keys: [await publicJwk()] }),
    sign: async (c) => {
      const { kid } = await publicJwk();
      const now = Math.floor(Date.now() / 1000);
      const exp = now + c.ttlSeconds;
      const header = b64url(JSON.stringify({ alg: ALG, kid, typ: 'JWT' }));
      const body = b64url(JSON.stringify({ ...payload(c), sub: c.userId, iss: issuer, aud: audience, iat: now, exp, jti: randomUUID() }));
      const { kms, SignCommand } = await kmsSdk();
      const out = await kms.send(
        new SignCommand({
          KeyId: keyId,
          Message: Buffer.from(`${header}.${body}`),
          MessageType: 'RAW',
          SigningAlgorithm: 'RSASSA_PKCS1_V1_5_SHA_256',
        }),
      );
      return { token: `${header}.${body}.${b64url(Buffer.from(out.Signature!))}`, expiresAt: new Date(exp * 1000).toISOString() };
    },
  };
}

/** The issuer configured for this process: ISSUER_KEY_FILE (local) or ISSUER_KMS_KEY_ID (AWS). */
export async function configuredIssuer(): Promise<Issuer> {
  const issuer = process.env.ISSUER_URL;
  if (!issuer) throw new Error('Missing required environment variable ISSUER_URL');
  const audience = process.env.JWT_AUDIENCE || DEFAULT_AUDIENCE;
  if (process.env.ISSUER_KEY_FILE) return fileIssuer(process.env.ISSUER_KEY_FILE, issuer, audience);
  if (process.env.ISSUER_KMS_KEY_ID) return kmsIssuer(process.env.ISSUER_KMS_KEY_ID, issuer, audience);
  throw new Error('Set ISSUER_KEY_FILE (local) or ISSUER_KMS_KEY_ID (AWS)');
}
