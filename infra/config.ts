import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { DEFAULT_AUDIENCE } from '#shared/auth/issuer.ts';

/**
 * Deployment configuration, read from CDK context (`cdk.json` "context", or `cdk deploy -c key=value`).
 * Every key is listed in docs/deploy.md. Values from `-c` arrive as strings, values from cdk.json may be
 * numbers or booleans: each reader accepts both and fails synthesis on a malformed value instead of
 * deploying a half-configured stack.
 */
export interface StackConfig {
  stackName: string;
  /**
   * `self`: the stack is its own issuer (KMS-signed tokens, JWKS and discovery served by the API, the
   * operator commands mint tokens). `external`: another OpenID issuer (e.g. a Cognito user pool) signs
   * tokens; the stack only verifies them.
   */
  issuer: { kind: 'self' } | { kind: 'external'; url: string };
  /** Accepted `aud` (or, for Cognito access tokens, `client_id`) values. The first one is what the self issuer signs. */
  jwtAudience: string[];
  tenantClaim: string;
  userClaim: string;
  /** Sender address of every e-mail; its SES identity must be verified (docs/deploy.md). */
  emailFrom: string;
  /** The SES identity the stack creates: the sender address itself, or its domain (DKIM records to publish). */
  emailIdentity: string;
  supportWebhookUrl?: string;
  /** API Gateway stage throttling: steady requests per second and burst, across all tenants. */
  throttle: { rateLimit: number; burstLimit: number };
  /**
   * The service's default per-tenant limit (shared/http/rate-limit.ts, answers 429 rate_limited): requests per
   * second and burst per tenant, one budget in the table across all functions and containers (users: half);
   * 0 turns the default off (`npm run admin -- set-limits` still limits a tenant). Passed to every JWT route.
   */
  tenantRateLimit: { rps: number; burst: number };
  /** Bedrock model of the writer; functions that declare the `bedrock:invoke` need may invoke only this model. */
  bedrockModelId?: string;
  logRetention: RetentionDays;
  /** Optional e-mail subscribed to the alarm topic. */
  alarmEmail?: string;
}

export const CONTEXT_KEYS = [
  'stackName',
  'issuerUrl',
  'jwtAudience',
  'tenantClaim',
  'userClaim',
  'emailFrom',
  'emailIdentity',
  'supportWebhookUrl',
  'throttleRateLimit',
  'throttleBurstLimit',
  'tenantRateLimitRps',
  'tenantRateLimitBurst',
  'bedrockModelId',
  'logRetentionDays',
  'alarmEmail',
] as const;

export type ContextKey = (typeof CONTEXT_KEYS)[number];

// dot-separated domain labels: `[^@\s]+\.` backtracked quadratically over a run of dots (npm run lint)
const EMAIL = /^[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+$/;

export function readConfig(node: Node): StackConfig {
  const raw = (key: ContextKey): unknown => node.tryGetContext(key);
  const str = (key: ContextKey): string | undefined => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') throw new Error(`context ${key} must be a string`);
    return v.trim();
  };
  const int = (key: ContextKey, fallback: number | undefined, min = 1): number | undefined => {
    const v = raw(key);
    if (v === undefined || v === null || v === '') return fallback;
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`context ${key} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
    return n;
  };

  const issuerUrl = str('issuerUrl');
  if (issuerUrl && !/^https:\/\/[^\s]+$/.test(issuerUrl))
    throw new Error('context issuerUrl must be an https URL (the exact `iss` of the tokens)');

  const emailFrom = str('emailFrom') ?? 'noreply@example.com';
  if (!EMAIL.test(emailFrom)) throw new Error(`context emailFrom must be an e-mail address, got ${emailFrom}`);
  const emailIdentity = str('emailIdentity') ?? emailFrom;
  if (emailIdentity !== emailFrom && emailIdentity !== emailFrom.split('@')[1]) {
    throw new Error('context emailIdentity must be the sender address (emailFrom) or its domain');
  }

  const retention = int('logRetentionDays', RetentionDays.ONE_MONTH)!;
  if (!Object.values(RetentionDays).includes(retention))
    throw new Error(`context logRetentionDays must be a CloudWatch Logs retention (1, 3, 5, 7, 14, 30, 60, 90, ...), got ${retention}`);

  const webhook = str('supportWebhookUrl');
  if (webhook && !/^https:\/\//.test(webhook)) throw new Error('context supportWebhookUrl must be an https URL');
  const alarmEmail = str('alarmEmail');
  if (alarmEmail && !EMAIL.test(alarmEmail)) throw new Error('context alarmEmail must be an e-mail address');

  const audience = (str('jwtAudience') ?? DEFAULT_AUDIENCE)
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  if (audience.length === 0) throw new Error('context jwtAudience must name at least one audience');

  return {
    stackName: str('stackName') ?? 'GoalTracking',
    issuer: issuerUrl ? { kind: 'external', url: issuerUrl.replace(/\/$/, '') } : { kind: 'self' },
    jwtAudience: audience,
    tenantClaim: str('tenantClaim') ?? 'tenant_uuid',
    userClaim: str('userClaim') ?? 'user_uuid',
    emailFrom,
    emailIdentity,
    supportWebhookUrl: webhook,
    throttle: { rateLimit: int('throttleRateLimit', 100)!, burstLimit: int('throttleBurstLimit', 200)! },
    // Defaults are the limiter's own (rate-limit.ts); set here so the deployed values are visible in the template.
    tenantRateLimit: { rps: int('tenantRateLimitRps', 50, 0)!, burst: int('tenantRateLimitBurst', 200, 1)! },
    bedrockModelId: str('bedrockModelId'),
    logRetention: retention as RetentionDays,
    alarmEmail,
  };
}
