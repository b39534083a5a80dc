import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

export interface WorkQueueProps {
  /** Receives before a message moves to the dead-letter queue (the worker row's maxReceiveCount). */
  maxReceiveCount: number;
  /** The consuming worker's timeout; the visibility timeout is six times it (AWS guidance for SQS event sources). */
  workerTimeout: Duration;
}

/**
 * A queue with its dead-letter queue: SSE (SQS-managed keys: no key policy to keep in step with producers,
 * no KMS calls per message), a policy refusing non-TLS requests on both, redrive after `maxReceiveCount`.
 * The visibility timeout is 6x the worker timeout so a message is not redelivered while a slow batch, plus the
 * event source mapping's own retries of the invoke, is still in flight.
 */
export class WorkQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;

  constructor(scope: Construct, id: string, props: WorkQueueProps) {
    super(scope, id);
    this.deadLetterQueue = new Queue(this, 'DeadLetters', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // The longest SQS allows: dead letters are evidence for an operator, not work.
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(props.workerTimeout.toSeconds() * 6),
      retentionPeriod: Duration.days(4),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'Serverless-SQSRedrivePolicy',
      reason:
        'This queue is the dead-letter queue of its work queue; a DLQ of a DLQ would only move the problem (its depth is alarmed instead).',
    });
  }

  /** Only sqs:SendMessage: producers never read, delete or inspect the queue (the URL comes from the environment). */
  grantSend(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }),
    );
  }
}
