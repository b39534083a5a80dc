import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { routeName } from '#shared/routes/index.ts';
import { allRoutes, build } from './stack.fixture.ts';

/** Every acknowledgement in the tree: rule id, reason, where. */
function acknowledgements(root: IConstruct): Array<{ id: string; reason: string; path: string }> {
  return root.node.findAll().flatMap((c) =>
    c.node.metadata
      .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((m) =>
        Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({
          id: id.replace(/^annotation::/i, ''),
          reason,
          path: c.node.path,
        })),
      ),
  );
}

const configurations: Array<[string, Record<string, unknown>]> = [
  ['default configuration (own issuer)', {}],
  [
    'every option set (external issuer, alarm e-mail, Bedrock, webhook, domain identity)',
    {
      issuerUrl: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example',
      jwtAudience: 'client-a',
      alarmEmail: 'ops@example.com',
      bedrockModelId: 'anthropic.claude-3-haiku-20240307-v1:0',
      supportWebhookUrl: 'https://support.example.com/hook',
      emailFrom: 'noreply@mail.example.com',
      emailIdentity: 'mail.example.com',
    },
  ],
];

describe('cdk-nag', () => {
  for (const [name, context] of configurations) {
    it(`finds nothing unacknowledged in the AwsSolutions and Serverless packs: ${name}`, () => {
      // The route table, the worker list and the fixture rows (every branch of the stack), minus the row that
      // needs the signing key when the issuer is external.
      const routes = context.issuerUrl ? allRoutes.filter((r) => !r.needs?.includes('kms:sign')) : [...allRoutes];
      if (context.bedrockModelId)
        routes.push({ ...allRoutes.at(-1)!, method: 'POST', path: '/fixture/writer', needs: ['bedrock:invoke' as never] });
      const { app, packs } = build({ context, routes });
      app.synth(); // aspects and lazy values first: the packs see the tree as it is synthesized
      for (const pack of packs) {
        const report = pack.validateScope(app);
        const findings = report.violations.map(
          (v) => `${v.severity} ${v.ruleName}: ${v.violatingResources.map((r) => r.constructPath).join(', ')}`,
        );
        expect(findings, pack.readPackName).toEqual([]);
      }
    });
  }

  it('carries a reason with every acknowledgement', () => {
    const { app } = build();
    const acks = acknowledgements(app);
    expect(acks.length).toBeGreaterThan(0);
    for (const a of acks) {
      expect(a.id, a.path).toMatch(/^(AwsSolutions|Serverless)-/);
      expect(a.reason.length, `${a.id} at ${a.path}`).toBeGreaterThan(40);
    }
    // Routes without the gateway's authorizer are acknowledged one by one: public ones, and those whose function
    // checks the token itself (door mcp: POST /mcp); never the others.
    const apig4 = acks.filter((a) => a.id === 'AwsSolutions-APIG4').map((a) => a.path.split('/').at(-1));
    expect(apig4.sort()).toEqual(
      allRoutes
        .filter((r) => r.auth === 'public' || r.door === 'mcp')
        .map((r) => `${routeName(r)}Route`)
        .sort(),
    );
  });
});
