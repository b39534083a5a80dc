import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { KMSClient } from '@aws-sdk/client-kms';

/**
 * Seals secrets the service must read back (webhook signing secrets) so the table never holds them in clear.
 * In AWS a KMS symmetric key (WEBHOOK_SECRET_KMS_KEY_ID), bound to the tenant and the owning record by the
 * encryption context; locally AES-256-GCM with a key file beside the local issuer's key (DATA_DIR).
 */
export interface SecretBox {
  seal(plain: string, context: Record<string, string>): Promise<string>;
  open(sealed: string, context: Record<string, string>): Promise<string>;
}

const aad = (context: Record<string, string>) => Buffer.from(JSON.stringify(Object.entries(context).sort()));

/** A local 32-byte key kept in `keyFile` (mode 0600), made at random on first use; kept across restarts. */
export function localKeyFile(keyFile: string): Buffer {
  if (!existsSync(keyFile)) {
    mkdirSync(dirname(keyFile), { recursive: true });
    try {
      writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // another process made it first
    }
  }
  return Buffer.from(readFileSync(keyFile, 'utf8'), 'base64');
}

export function fileSecretBox(keyFile: string): SecretBox {
  const key = () => localKeyFile(keyFile);
  return {
    async seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key(), iv).setAAD(aad(context));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `local:v1:${Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64')}`;
    },
    async open(sealed, context) {
      const raw = Buffer.from(sealed.replace(/^local:v1:/, ''), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key(), raw.subarray(0, 12)).setAAD(aad(context));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

/** A KMS key as a SecretBox; the SDK client (shared/auth/kms-secrets.ts) is imported on first use, not at cold start. */
export function kmsSecretBox(keyId: string, client?: KMSClient): SecretBox {
  type Sdk = typeof import('#shared/auth/kms-secrets.ts');
  let sdk: Promise<{ kms: KMSClient; EncryptCommand: Sdk['EncryptCommand']; DecryptCommand: Sdk['DecryptCommand'] }> | undefined;
  const kmsSdk = () =>
    (sdk ??= import('#shared/auth/kms-secrets.ts').then((m) => ({
      kms: client ?? new m.KMSClient({}),
      EncryptCommand: m.EncryptCommand,
      DecryptCommand: m.DecryptCommand,
    })));
  return {
    async seal(plain, context) {
      const { kms, EncryptCommand } = await kmsSdk();
      const out = await kms.send(new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plain, 'utf8'), EncryptionContext: context }));
      return `kms:v1:${Buffer.from(out.CiphertextBlob!).toString('base64')}`;
    },
    async open(sealed, context) {
      const { kms, DecryptCommand } = await kmsSdk();
      const out = await kms.send(
        new DecryptCommand({
          KeyId: keyId,
          CiphertextBlob: Buffer.from(sealed.replace(/^kms:v1:/, ''), 'base64'),
          EncryptionContext: context,
        }),
      );
      return Buffer.from(out.Plaintext!).toString('utf8');
    },
  };
}

let box: SecretBox | undefined;

/** The box for this process: KMS when WEBHOOK_SECRET_KMS_KEY_ID is set, else a key file (WEBHOOK_SECRET_KEY_FILE, or beside ISSUER_KEY_FILE). */
export function secretBox(): SecretBox {
  if (box) return box;
  if (process.env.WEBHOOK_SECRET_KMS_KEY_ID) return (box = kmsSecretBox(process.env.WEBHOOK_SECRET_KMS_KEY_ID));
  const file =
    process.env.WEBHOOK_SECRET_KEY_FILE ||
    (process.env.ISSUER_KEY_FILE && join(dirname(process.env.ISSUER_KEY_FILE), 'webhook-secret-key'));
  if (!file) throw new Error('Set WEBHOOK_SECRET_KMS_KEY_ID (AWS) or WEBHOOK_SECRET_KEY_FILE / ISSUER_KEY_FILE (local)');
  return (box = fileSecretBox(file));
}
