import { contextValue, withContextValue } from '#shared/request-context.ts';

/**
 * The domain's port for operator metrics: what a domain function reports about the work it did, without knowing
 * how (or whether) it is published. The shell (a handler) runs the domain call inside `collectSignals` and emits
 * what was reported (shared/observability/emit.ts); outside a collection, reporting does nothing.
 */
export interface DomainSignals {
  /** Rollup ancestors the last committed check-in write moved in its own transaction. */
  rollupDepth?: number;
}

export function reportSignal<K extends keyof DomainSignals>(key: K, value: DomainSignals[K]): void {
  const signals = contextValue('signals');
  if (signals) signals[key] = value;
}

/** Runs `fn` collecting the signals it reports (each request its own, through the request context). */
export async function collectSignals<T>(fn: () => Promise<T>): Promise<{ value: T; signals: DomainSignals }> {
  const signals: DomainSignals = {};
  const value = await withContextValue('signals', signals, fn);
  return { value, signals };
}
