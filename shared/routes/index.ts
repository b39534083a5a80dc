import type { Route } from '#shared/routes/types.ts';
import { platformRoutes } from '#shared/routes/platform.ts';
import { userRoutes } from '#shared/routes/users.ts';
import { teamRoutes } from '#shared/routes/teams.ts';
import { labelRoutes } from '#shared/routes/labels.ts';
import { timePeriodRoutes } from '#shared/routes/time-periods.ts';
import { goalRoutes } from '#shared/routes/goals.ts';
import { checkinRoutes } from '#shared/routes/checkins.ts';
import { historyRoutes } from '#shared/routes/history.ts';
import { sharingRoutes, sharingWorkers } from '#shared/routes/sharing.ts';
import { integrationRoutes, integrationSchedules, integrationWorkers } from '#shared/routes/integrations.ts';
import { documentRoutes, documentWorkers } from '#shared/routes/documents.ts';
import { importRoutes, importWorkers } from '#shared/routes/imports.ts';
import { webhookRoutes, webhookWorkers } from '#shared/routes/webhooks.ts';
import { mcpRoutes } from '#shared/routes/mcp.ts';
import { scimRoutes } from '#shared/routes/scim.ts';
import { serviceAccountRoutes } from '#shared/routes/service-accounts.ts';
import { eventRoutes } from '#shared/routes/events.ts';
import { streamConsumers as streamRows } from '#shared/routes/stream.ts';
import type { Schedule, StreamConsumer, Worker } from '#shared/routes/types.ts';

export type { Route, Schedule, StreamConsumer, Worker } from '#shared/routes/types.ts';

/** The route table: the single source for the CDK stack, the local stack and the OpenAPI document. */
export const routes: Route[] = [
  ...platformRoutes,
  ...userRoutes,
  ...teamRoutes,
  ...labelRoutes,
  ...timePeriodRoutes,
  ...goalRoutes,
  ...historyRoutes,
  ...checkinRoutes,
  ...sharingRoutes,
  ...integrationRoutes,
  ...documentRoutes,
  ...importRoutes,
  ...webhookRoutes,
  ...mcpRoutes,
  ...scimRoutes,
  ...serviceAccountRoutes,
  ...eventRoutes,
];

/**
 * The entry points besides the routes, each a table both stacks read (docs/architecture.md "Entry points"):
 * queue consumers, one Lambda each behind an SQS queue with a dead-letter queue;
 */
export const workers: Worker[] = [...sharingWorkers, ...integrationWorkers, ...documentWorkers, ...importWorkers, ...webhookWorkers];

/** the change stream's consumers, one Lambda each on the table's stream; */
export const streamConsumers: StreamConsumer[] = [...streamRows];

/** and the schedules, one Lambda each run by an EventBridge rule (a timer locally). */
export const schedules: Schedule[] = [...integrationSchedules];

/** Stable function name for a route, used for CDK construct ids and logs: `GET /rest/v2/users/{id}` → `GetRestV2UsersId`. */
export function routeName(r: Pick<Route, 'method' | 'path'>): string {
  const words = [r.method.toLowerCase(), ...r.path.split(/[^A-Za-z0-9]+/).filter(Boolean)];
  return words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}
