import { createPublicKey, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { KMSClient, GetPublicKeyCommand, SignCommand } from '@aws-sdk/client-kms';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

/**
 * The service's own token issuer. Locally the ES256 key pair lives in DATA_DIR; in AWS the private key is a
 * KMS asymmetric key that never leaves KMS. Both publish the same JWKS/discovery documents and sign the
 * same claims, so the JWT authorizer and the operator commands work the same way against either.
 */
export interface TokenClaims {
  tenantId: string;
  userId: string;
  ttlSeconds: number;
}

export interface Issuer {
  issuer: string;
  audience: string;
  jwks(): Promise<{ keys: JWK[] }>;
  sign(claims: TokenClaims): Promise<{ token: string; expiresAt: string }>;
}

export const DEFAULT_AUDIENCE = 'goal-tracking-api';
export const DEFAULT_TTL_SECONDS = 3600;

function payload(c: TokenClaims, tenantClaim: string, userClaim: string) {
  return { [tenantClaim]: c.tenantId, [userClaim]: c.userId };
}

const claimNames = () => ({ tenant: process.env.TENANT_CLAIM || 'tenant_uuid', user: process.env.USER_CLAIM || 'user_uuid' });

/** Local issuer: an ES256 key pair kept in a JSON file (created on first use). */
export async function fileIssuer(keyFile: string, issuer: string, audience = DEFAULT_AUDIENCE): Promise<Issuer> {
  if (!existsSync(keyFile)) {
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'ES256', use: 'sig' };
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, JSON.stringify(jwk), { mode: 0o600 });
  }
  const priv = JSON.parse(readFileSync(keyFile, 'utf8')) as JWK;
  const { d: _d, ...pub } = priv;
  void _d;
  const key = await importJWK(priv, 'ES256');
  return {
    issuer,
    audience,
    jwks: async () => ({ keys: [pub] }),
    sign: async (c) => {
      const names = claimNames();
      const exp = Math.floor(Date.now() / 1000) + c.ttlSeconds;
      const token = await new SignJWT(payload(c, names.tenant, names.user))
        .setProtectedHeader({ alg: 'ES256', kid: priv.kid!, typ: 'JWT' })
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

/** DER-encoded ECDSA signature (KMS) → JOSE's fixed-length r||s. */
export function derToJose(der: Uint8Array, size = 32): Buffer {
  const buf = Buffer.from(der);
  let offset = 2;
  if (buf[1]! & 0x80) offset += buf[1]! & 0x7f;
  const readInt = () => {
    if (buf[offset] !== 0x02) throw new Error('bad DER signature');
    const len = buf[offset + 1]!;
    let int = buf.subarray(offset + 2, offset + 2 + len);
    offset += 2 + len;
    while (int.length > size && int[0] === 0) int = int.subarray(1);
    return Buffer.concat([Buffer.alloc(size - int.length), int]);
  };
  return Buffer.concat([readInt(), readInt()]);
}

/** AWS issuer: a KMS ECC_NIST_P256 key; only its public half is ever exported. */
export function kmsIssuer(keyId: string, issuer: string, audience = DEFAULT_AUDIENCE, kms = new KMSClient({})): Issuer {
  let jwk: Promise<JWK> | undefined;
  const publicJwk = () =>
    (jwk ??= kms.send(new GetPublicKeyCommand({ KeyId: keyId })).then(async (out) => {
      const pub = createPublicKey({ key: Buffer.from(out.PublicKey!), format: 'der', type: 'spki' });
      return { ...(await exportJWK(pub)), kid: out.KeyId!.split('/').pop()!, alg: 'ES256', use: 'sig' };
    }));
  return {
    issuer,
    audience,
    jwks: async () => ({ keys: [await publicJwk()] }),
    sign: async (c) => {
      const names = claimNames();
      const { kid } = await publicJwk();
      const now = Math.floor(Date.now() / 1000);
      const exp = now + c.ttlSeconds;
      const header = b64url(JSON.stringify({ alg: 'ES256', kid, typ: 'JWT' }));
      const body = b64url(JSON.stringify({ ...payload(c, names.tenant, names.user), sub: c.userId, iss: issuer, aud: audience, iat: now, exp, jti: randomUUID() }));
      const out = await kms.send(new SignCommand({ KeyId: keyId, Message: Buffer.from(`${header}.${body}`), MessageType: 'RAW', SigningAlgorithm: 'ECDSA_SHA_256' }));
      return { token: `${header}.${body}.${b64url(derToJose(out.Signature!))}`, expiresAt: new Date(exp * 1000).toISOString() };
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
