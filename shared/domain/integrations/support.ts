import type { RequestSource } from '#shared/domain/integrations/entity.ts';
import type { Log } from '#shared/logger.ts';

/** The queue between POST /connector_requests and the support-issue worker (shared/routes/integrations.ts). */
export const SUPPORT_ISSUE_QUEUE = 'support-issues';

/** Default time one webhook call may take; the worker's Lambda timeout (30 s) bounds the whole batch, sent concurrently. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;

/**
 * One message per (connector request, requester): everything the issue needs is captured at request time,
 * so the worker reads no table (its row is `table: 'none'`) and a later profile change does not rewrite
 * history. `idempotency_key` is stable across client retries and queue redeliveries; the webhook receives
 * it (header and body) so the support tool can drop duplicates of at-least-once delivery.
 */
export interface SupportIssueMessage {
  version: 1;
  idempotency_key: string;
  tenant: { uuid: string; name: string | null };
  requester: { uuid: string; display_name: string; email: string };
  connector_request: {
    uuid: string;
    connection_type: string;
    normalized_key: string;
    connector_display_name: string;
    request_source: RequestSource | null;
    request_count: number;
  };
  requested_at: string;
}

export const supportIssueKey = (tenantId: string, requestUuid: string, userUuid: string) =>
  `connector-request:${tenantId}:${requestUuid}:${userUuid}`;

/** The JSON the support tool receives: a ready-to-file issue, attributed to the requester (`reporter`). */
export function supportIssuePayload(msg: SupportIssueMessage) {
  const c = msg.connector_request;
  const workspace = msg.tenant.name ? `${msg.tenant.name} (${msg.tenant.uuid})` : msg.tenant.uuid;
  const via = c.request_source === 'catalog' ? ' from the connector catalog' : c.request_source === 'by_name' ? ' by name' : '';
  return {
    type: 'connector_request',
    idempotency_key: msg.idempotency_key,
    title: `Connector request: ${c.connector_display_name}`,
    description: [
      `${msg.requester.display_name} <${msg.requester.email}> requested the connector "${c.connector_display_name}" (${c.connection_type})${via} in workspace ${workspace}.`,
      `Requesters of this connector in the workspace so far: ${c.request_count}.`,
    ].join('\n'),
    reporter: msg.requester,
    workspace: msg.tenant,
    connector_request: c,
    requested_at: msg.requested_at,
  };
}

export interface SupportWebhookDeps {
  /** The support tool's webhook; unset means "not configured": messages are acknowledged without a call. */
  webhookUrl(): string | undefined;
  timeoutMs(): number;
  fetch?: typeof fetch;
  log?: Pick<Log, 'info' | 'warn' | 'error'>;
}

/** POSTs one issue; any non-2xx answer, network error or timeout throws (the queue retries, then dead-letters). */
export async function postSupportIssue(
  url: string,
  msg: SupportIssueMessage,
  deps: Pick<SupportWebhookDeps, 'timeoutMs' | 'fetch'>,
): Promise<number> {
  // Checked here so a misconfiguration fails with a message that does not echo the URL (fetch's would).
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new Error('SUPPORT_WEBHOOK_URL is not a valid URL');
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new Error('SUPPORT_WEBHOOK_URL must be an http(s) URL');
  const res = await (deps.fetch ?? fetch)(target, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': msg.idempotency_key },
    body: JSON.stringify(supportIssuePayload(msg)),
    signal: AbortSignal.timeout(deps.timeoutMs()),
    redirect: 'error', // a redirect would re-send the body somewhere nobody configured
  });
  await res.body?.cancel(); // the answer's body is not used; release the connection
  if (!res.ok) throw new Error(`support webhook answered ${res.status}`);
  return res.status;
}

/**
 * Files one issue: POSTs it to the support tool's webhook, or does nothing when no tool is configured. The
 * webhook URL is never logged or put in an error: such URLs often carry their credential in the path or query.
 */
export async function fileSupportIssue(
  msg: SupportIssueMessage,
  deps: Pick<SupportWebhookDeps, 'webhookUrl' | 'timeoutMs' | 'fetch'>,
): Promise<{ idempotency_key: string; status: number | 'not_configured' }> {
  const url = deps.webhookUrl();
  return { idempotency_key: msg.idempotency_key, status: url ? await postSupportIssue(url, msg, deps) : 'not_configured' };
}
