import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ConfigurationSet, ConfigurationSetTlsPolicy, EmailIdentity, Identity, SuppressionReasons } from 'aws-cdk-lib/aws-ses';
import { Construct } from 'constructs';

export interface MailerProps {
  /** Sender address (EMAIL_FROM). */
  from: string;
  /** The identity to create: the address itself, or its domain. */
  identity: string;
}

/**
 * SES for the workers that send e-mail: the sender identity, and a configuration set that requires TLS to the
 * receiving server, keeps reputation metrics and suppresses addresses that bounced or complained (protecting the
 * account's sending reputation). A new account is in the SES sandbox: see docs/deploy.md.
 */
export class Mailer extends Construct {
  readonly identity: EmailIdentity;
  readonly configurationSet: ConfigurationSet;
  readonly from: string;

  constructor(scope: Construct, id: string, props: MailerProps) {
    super(scope, id);
    this.from = props.from;
    this.configurationSet = new ConfigurationSet(this, 'ConfigurationSet', {
      tlsPolicy: ConfigurationSetTlsPolicy.REQUIRE,
      reputationMetrics: true,
      suppressionReasons: SuppressionReasons.BOUNCES_AND_COMPLAINTS,
    });
    this.identity = new EmailIdentity(this, 'Identity', {
      identity: props.identity.includes('@') ? Identity.email(props.identity) : Identity.domain(props.identity),
      configurationSet: this.configurationSet,
    });
  }

  get configurationSetArn(): string {
    return Stack.of(this).formatArn({
      service: 'ses',
      resource: 'configuration-set',
      resourceName: this.configurationSet.configurationSetName,
    });
  }

  /** ses:SendEmail through this identity and configuration set, and only with the configured sender address. */
  grantSend(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['ses:SendEmail'],
        resources: [this.identity.emailIdentityArn, this.configurationSetArn],
        conditions: { StringEquals: { 'ses:FromAddress': this.from } },
      }),
    );
  }
}
