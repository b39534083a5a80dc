/**
 * The KMS client and the commands the secret box and the id seed secret (id-seed-secret.ts) use, in a module of
 * their own so that they are imported on first use, not at cold start: a dynamic import of the SDK package
 * itself would keep every one of its commands.
 */
export { DecryptCommand, EncryptCommand, GenerateMacCommand, KMSClient } from '@aws-sdk/client-kms';
