import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * Outbound events (contract section 12): the stack's EventBridge bus, which receives every event (source
 * `goal-tracking`, detail-type = event type) for AWS-native consumers, and the symmetric KMS key that seals
 * webhook signing secrets at rest (encryption context: tenant and webhook uuid).
 */
export class OutboundEvents extends Construct {
  readonly bus: EventBus;
  readonly secretKey: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bus = new EventBus(this, 'Bus', {
      eventBusName: `${Stack.of(this).stackName}-events`,
      description: 'Goal-tracking outbound events (source goal-tracking)',
    });
    this.secretKey = new Key(this, 'WebhookSecretKey', {
      description: `${Stack.of(this).stackName}: seals webhook signing secrets`,
      enableKeyRotation: true,
      alias: `alias/${Stack.of(this).stackName}/webhook-secrets`,
      // Without the key no stored secret opens and every endpoint would need re-registering.
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /** Seal (create) and open (deliver) webhook secrets: Encrypt and Decrypt on this key only. */
  grantSecrets(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['kms:Encrypt', 'kms:Decrypt'], resources: [this.secretKey.keyArn] }),
    );
  }

  grantPublish(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['events:PutEvents'], resources: [this.bus.eventBusArn] }),
    );
  }
}
