import { dirname, join } from 'node:path';
import { localKeyFile } from '#shared/auth/secret-box.ts';

/**
 * The server-side secret keying idempotent requests' id seeds (shared/ids.ts, idSeedOf). In AWS it is derived
 * once per container from the stack's KMS HMAC key (ID_SEED_KMS_KEY_ID: GenerateMac of a fixed label, so every
 * container derives the same secret and the key itself never leaves KMS); locally a random 32-byte file in the
 * data dir (ID_SEED_KEY_FILE, or beside ISSUER_KEY_FILE), kept across restarts so a retry still gets its ids.
 */
const LABEL = 'goal-tracking/idempotency-id-seed/v1';

let secret: Promise<Uint8Array> | undefined;

export function idSeedSecret(): Promise<Uint8Array> {
  secret ??= load();
  // a failed KMS call is not kept: the next request asks again
  secret.catch(() => (secret = undefined));
  return secret;
}

async function load(): Promise<Uint8Array> {
  const keyId = process.env.ID_SEED_KMS_KEY_ID;
  if (keyId) {
    const { KMSClient, GenerateMacCommand } = await import('#shared/auth/kms-secrets.ts');
    const out = await new KMSClient({}).send(
      new GenerateMacCommand({ KeyId: keyId, MacAlgorithm: 'HMAC_SHA_256', Message: Buffer.from(LABEL, 'utf8') }),
    );
    return out.Mac!;
  }
  const file = process.env.ID_SEED_KEY_FILE || (process.env.ISSUER_KEY_FILE && join(dirname(process.env.ISSUER_KEY_FILE), 'id-seed-key'));
  if (!file) throw new Error('Set ID_SEED_KMS_KEY_ID (AWS) or ID_SEED_KEY_FILE / ISSUER_KEY_FILE (local)');
  return localKeyFile(file);
}
