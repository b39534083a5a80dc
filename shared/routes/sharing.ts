import { ACCESS_REQUEST_QUEUE } from '#shared/domain/sharing/mail.ts';
import { SHAREABLE_PATHS, SHAREABLE_TYPE_BY_PATH, type ShareablePath } from '#shared/domain/sharing/types.ts';
import type { Route, Worker } from '#shared/routes/types.ts';
import {
  AccessRequestBody,
  AccessRequestResponse,
  GrantBody,
  MyAccessRequestResponse,
  NotificationListResponse,
  ResendBody,
  ResendResponse,
  ShareableCreateBody,
  shareableResponse,
} from '#shared/schemas/sharing.ts';

/**
 * The four shareable types share one handler file per operation (the handler reads the type from the route
 * key); each type has its own rows, so any other `{shareable_type}` is an unknown path (404) in API Gateway
 * and on the local stack alike, and no row can shadow another application path such as `/connector_requests`.
 * `{shareable_uuid}` is `<tenant_uuid>_<resource_uuid>` or the bare resource uuid.
 */
const typeRoutes = (path: ShareablePath): Route[] => {
  const base = `/${path}`;
  const item = `${base}/{shareable_uuid}`;
  const type = SHAREABLE_TYPE_BY_PATH[path];
  const name = type.replace('_', ' ');
  const tag = 'sharing';
  return [
    {
      method: 'POST',
      path: base,
      handler: 'functions/sharing/create.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
      doc: {
        summary: `Create a ${name}; the caller becomes its owner (not viewers)`,
        tag,
        extension: true,
        body: ShareableCreateBody,
        success: { status: 201, schema: shareableResponse(type) },
      },
    },
    {
      method: 'GET',
      path: item,
      handler: 'functions/sharing/get.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:read',
      table: 'read',
      doc: {
        summary: `Get a ${name} (owner, admins, or any grant; 403 otherwise)`,
        tag,
        extension: true,
        success: { status: 200, schema: shareableResponse(type) },
      },
    },
    {
      method: 'PUT',
      path: `${item}/grants`,
      handler: 'functions/sharing/grant.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
      doc: {
        summary: `Grant a user a level on a ${name} (owner, admins and manage grantees); resolves the user's pending access request it satisfies`,
        tag,
        extension: true,
        body: GrantBody,
        success: { status: 200, schema: shareableResponse(type) },
      },
    },
    {
      method: 'POST',
      path: `${item}/access_requests`,
      handler: 'functions/sharing/request-access.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
      sendsTo: [ACCESS_REQUEST_QUEUE],
      doc: {
        summary: `Request a level on a ${name} (self-scoped, no access needed): creates or upgrades the caller's pending request; the owner and managers are notified (in-app and e-mail) only when one is created`,
        tag,
        body: AccessRequestBody,
        success: { status: 200, schema: AccessRequestResponse },
      },
    },
    {
      method: 'GET',
      path: `${item}/access_requests/mine`,
      handler: 'functions/sharing/my-request.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:read',
      table: 'read',
      doc: {
        summary: `The caller's pending access request on a ${name}, or null (self-scoped)`,
        tag,
        success: { status: 200, schema: MyAccessRequestResponse },
      },
    },
    {
      method: 'POST',
      path: `${item}/access_requests/resend`,
      handler: 'functions/sharing/resend.ts',
      auth: 'jwt',
      door: 'rest',
      scope: 'goals:write',
      table: 'write',
      sendsTo: [ACCESS_REQUEST_QUEUE],
      doc: {
        summary: `Re-send the caller's pending access request on a ${name} (new in-app notices and e-mails), at most once an hour counted from the last e-mail, the one at creation included`,
        tag,
        body: ResendBody,
        success: { status: 200, schema: ResendResponse },
      },
    },
  ];
};

export const sharingRoutes: Route[] = [
  ...SHAREABLE_PATHS.flatMap(typeRoutes),
  {
    method: 'GET',
    path: '/notifications',
    handler: 'functions/sharing/notifications.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:read',
    table: 'read',
    doc: {
      summary: "The caller's own in-app notifications, newest first",
      tag: 'sharing',
      extension: true,
      list: true,
      success: { status: 200, schema: NotificationListResponse },
    },
  },
];

/** The sharing domain's queue consumer; each queue gets a dead-letter queue after `maxReceiveCount` receives. */
export const sharingWorkers: Worker[] = [
  // Access request e-mails to owners and managers. Writes: each notification's email_sent_at (idempotency marker).
  {
    queue: ACCESS_REQUEST_QUEUE,
    handler: 'functions/workers/access-request-notify.ts',
    maxReceiveCount: 5,
    batchSize: 10,
    timeoutSeconds: 30,
    table: 'write',
    sendsEmail: true,
    // records one by one, a few e-mails each: two batches at once stay near SES's default sending rate (14/s)
    maxConcurrency: 2,
  },
];
