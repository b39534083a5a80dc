/**
 * The KMS client and the commands the token issuer uses, in a module of their own so that `kmsIssuer`
 * (shared/auth/issuer.ts) imports them on first use, not at cold start: a dynamic import of the SDK package
 * itself would keep every one of its commands.
 */
export { GetPublicKeyCommand, KMSClient, SignCommand } from '@aws-sdk/client-kms';
