import type { AppError } from '#shared/errors.ts';

/**
 * A domain command's outcome: the typed error to answer (nothing is written), or what to write. Every
 * `shared/domain/<x>/decide.ts` returns one; the command runner (shared/command/run.ts) answers the error or
 * commits the write. Pure: the domain imports it without the store (or the SDK).
 */
export type Decision<T> = { error: AppError } | { write: T };

export const refuse = (error: AppError): { error: AppError } => ({ error });
export const accept = <T>(write: T): { write: T } => ({ write });

/** Unwraps a decision outside the runner (a gate, a test): its error thrown, its write returned. */
export function decided<T>(d: Decision<T>): T {
  if ('error' in d) throw d.error;
  return d.write;
}
