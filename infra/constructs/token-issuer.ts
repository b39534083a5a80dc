import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * KMS key spec of the stack's own issuer. RSA, not ECC: the HTTP API JWT authorizer verifies only RSA-based
 * algorithms ("Currently, only RSA-based algorithms are supported", API Gateway developer guide, JWT
 * authorizers), so tokens must be RS256 (KMS signing algorithm RSASSA_PKCS1_V1_5_SHA_256).
 */
export const ISSUER_KEY_SPEC = KeySpec.RSA_2048;

/**
 * The stack's own token issuer key: an asymmetric KMS signing key whose private half never leaves KMS.
 * Functions and operators get kms:Sign or kms:GetPublicKey on this key only, nothing else.
 */
export class TokenIssuer extends Construct {
  readonly key: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new Key(this, 'Key', {
      description: `${Stack.of(this).stackName}: signs the API's bearer tokens (RS256)`,
      keySpec: ISSUER_KEY_SPEC,
      keyUsage: KeyUsage.SIGN_VERIFY,
      alias: `alias/${Stack.of(this).stackName}/token-issuer`,
      // Deleting the key invalidates every token it signed; keep it if the stack goes away by mistake.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  grantSign(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['kms:Sign'], resources: [this.key.keyArn] }));
  }

  grantPublicKey(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['kms:GetPublicKey'], resources: [this.key.keyArn] }));
  }
}
