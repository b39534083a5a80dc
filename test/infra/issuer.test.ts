import { createSign, generateKeyPairSync } from 'node:crypto';
import { GetPublicKeyCommand, SignCommand, type KMSClient } from '@aws-sdk/client-kms';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { kmsIssuer } from '#shared/auth/issuer.ts';
import { ISSUER_KEY_SPEC } from '../../infra/constructs/token-issuer.ts';

/** The KMS signing algorithm that makes RS256 with the stack's RSA key (infra/constructs/token-issuer.ts): what the JWT authorizer verifies. */
const ISSUER_SIGNING_ALGORITHM = 'RSASSA_PKCS1_V1_5_SHA_256';

/** A stand-in for KMS holding an RSA key of the stack's key spec; it refuses other signing algorithms, as KMS does. */
function fakeKms() {
  expect(ISSUER_KEY_SPEC).toBe('RSA_2048');
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    async send(cmd: unknown) {
      if (cmd instanceof GetPublicKeyCommand)
        return { KeyId: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd', PublicKey: publicKey.export({ format: 'der', type: 'spki' }) };
      if (cmd instanceof SignCommand) {
        const input = cmd.input;
        if (input.SigningAlgorithm !== ISSUER_SIGNING_ALGORITHM)
          throw new Error(`ValidationException: ${input.SigningAlgorithm} is not valid for a ${ISSUER_KEY_SPEC} key`);
        return {
          Signature: createSign('RSA-SHA256')
            .update(Buffer.from(input.Message as Uint8Array))
            .sign(privateKey),
        };
      }
      throw new Error('unexpected command');
    },
  } as unknown as KMSClient;
}

describe('the stack’s own issuer against the deployed JWT authorizer', () => {
  // The HTTP API JWT authorizer verifies RSA-based algorithms only, so the stack's key is RSA_2048 and tokens are RS256.
  it('signs RS256 tokens with the stack key’s signing algorithm, verifiable with the published JWKS', async () => {
    const issuer = kmsIssuer('alias/test', 'https://api.example.com', 'goal-tracking-api', fakeKms());
    const { token } = await issuer.sign({ tenantId: 't', userId: 'u', ttlSeconds: 60 });
    expect(decodeProtectedHeader(token).alg).toBe('RS256');
    const { payload } = await jwtVerify(token, createLocalJWKSet(await issuer.jwks()), {
      issuer: 'https://api.example.com',
      audience: 'goal-tracking-api',
      algorithms: ['RS256'],
    });
    expect(payload.sub).toBe('u');
  });
});
