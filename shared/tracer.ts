import { Tracer } from '@aws-lambda-powertools/tracer';

/** One tracer per container. Outside Lambda (local stack, tests) Powertools disables it by itself. */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'goal-tracking' });
