import { AsyncLocalStorage } from 'node:async_hooks';
import type { DbMetrics } from '#shared/db/metrics.ts';
import type { DomainSignals } from '#shared/signals.ts';
import type { Grant } from '#shared/function-grant.ts';
import type { IdSeed } from '#shared/ids.ts';
import type { ActiveTrace } from '#shared/tracer.ts';

/**
 * What code deep inside a request reads about it without being handed it: the function's grant (local stack,
 * shared/function-grant.ts; shared/grants.ts enforces it), the id seed of an idempotent request (shared/ids.ts), the request's DynamoDB metrics
 * (shared/db/metrics.ts), its trace subsegment (shared/tracer.ts) and its domain signals (shared/signals.ts). One AsyncLocalStorage holds them all:
 * Node 22 copies the value of every enabled store onto every promise created, so one store per concern cost
 * a copy per store on each of a request's hundreds of promises (the profile of `npm run load` showed it).
 * Concurrent requests (the local stack runs many in one process) each see their own context.
 */
export interface RequestContext {
  grant?: Grant;
  idSeed?: IdSeed;
  dbMetrics?: DbMetrics;
  trace?: ActiveTrace;
  /** What the domain reports for the operator's metrics (shared/signals.ts). */
  signals?: DomainSignals;
  /** The OAuth scope of the route the local stack is serving (shared/auth/scopes.ts requiredScope; deployed: ROUTE_SCOPE). */
  routeScope?: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The current context's value for `key`, if any. */
export function contextValue<K extends keyof RequestContext>(key: K): RequestContext[K] {
  return storage.getStore()?.[key];
}

/** Runs `fn` with `key` set to `value` for it and everything it starts; the rest of the context is inherited. */
export function withContextValue<K extends keyof RequestContext, T>(key: K, value: RequestContext[K], fn: () => T): T {
  return storage.run({ ...storage.getStore(), [key]: value }, fn);
}

/**
 * Sets `key` for the rest of the current execution and what it starts (AsyncLocalStorage.enterWith): for a
 * middleware's `before`, whose effect must reach the handler that runs after it.
 */
export function enterContextValue<K extends keyof RequestContext>(key: K, value: RequestContext[K]): void {
  storage.enterWith({ ...storage.getStore(), [key]: value });
}
