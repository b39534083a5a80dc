/**
 * The KMS client and the commands the secret box uses, in a module of their own so that `kmsSecretBox`
 * (shared/auth/secret-box.ts) imports them on first use, not at cold start: a dynamic import of the SDK
 * package itself would keep every one of its commands.
 */
export { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
