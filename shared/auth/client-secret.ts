import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Service account secrets (contract section 17): 32 random bytes, shown once, stored only as an scrypt hash with
 * a salt of its own (`scrypt$N$r$p$salt$hash`, base64url), so a copy of the table does not give them away.
 */
const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;

export const newClientSecret = () => `sas_${randomBytes(32).toString('base64url')}`;

const derive = (secret: string, salt: Buffer, n: number, r: number, p: number) =>
  new Promise<Buffer>((resolve, reject) =>
    scrypt(secret, salt, KEY_LENGTH, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );

export async function hashClientSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(secret, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether `secret` matches `stored` (constant time in the key's bytes); a malformed stored value matches nothing. */
export async function verifyClientSecret(secret: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(secret, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * A hash no secret matches, checked when the client is unknown: the answer then costs the same scrypt run as a
 * wrong secret, so its timing does not tell whether the client exists.
 */
export const UNKNOWN_CLIENT_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(KEY_LENGTH).toString('base64url')}`;
