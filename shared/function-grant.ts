/**
 * What the running function's row (route, worker, stream processor) grants it: its table access and the
 * queues it may send to, as infra/ turns them into IAM. A pure type, below the request context that carries it
 * (shared/request-context.ts); shared/grants.ts enforces it on the local stack.
 */
export interface Grant {
  /** The row, for the message: `POST /rest/v2/objectives`, `worker notifications`. */
  name: string;
  table: 'none' | 'read' | 'write';
  sendsTo: readonly string[];
}
