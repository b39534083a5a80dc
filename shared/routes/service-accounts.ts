import type { Route } from '#shared/routes/types.ts';
import {
  OAuthErrorResponse,
  ServiceAccountCreateBody,
  ServiceAccountListResponse,
  ServiceAccountResponse,
  ServiceAccountUpdateBody,
  ServiceAccountWithSecretResponse,
  TokenRequestBody,
  TokenResponse,
} from '#shared/schemas/service-accounts.ts';

const tag = 'service_accounts';
const extension = true;
const scope = 'service_accounts';

/** Service accounts and their token endpoint (contract section 17): admin users manage them; the client credentials grant is public. */
export const serviceAccountRoutes: Route[] = [
  {
    method: 'GET',
    path: '/service_accounts',
    handler: 'functions/service-accounts/list.ts',
    auth: 'jwt',
    door: 'rest',
    scope,
    table: 'read',
    doc: {
      summary: "The tenant's service accounts (admins), oldest first",
      tag,
      extension,
      list: true,
      success: { status: 200, schema: ServiceAccountListResponse },
    },
  },
  {
    method: 'POST',
    path: '/service_accounts',
    handler: 'functions/service-accounts/create.ts',
    auth: 'jwt',
    door: 'rest',
    scope,
    table: 'write',
    doc: {
      summary: 'Create a service account (admins). Its client_secret is in this response only',
      tag,
      extension,
      body: ServiceAccountCreateBody,
      success: { status: 201, schema: ServiceAccountWithSecretResponse },
    },
  },
  {
    method: 'GET',
    path: '/service_accounts/{id}',
    handler: 'functions/service-accounts/get.ts',
    auth: 'jwt',
    door: 'rest',
    scope,
    table: 'read',
    doc: {
      summary: 'Get a service account (admins; never its secret)',
      tag,
      extension,
      success: { status: 200, schema: ServiceAccountResponse },
    },
  },
  {
    method: 'PUT',
    path: '/service_accounts/{id}',
    handler: 'functions/service-accounts/update.ts',
    auth: 'jwt',
    door: 'rest',
    scope,
    table: 'write',
    doc: {
      summary: 'Update a service account: name, scopes, status (admins). Disabled, its tokens are refused at once',
      tag,
      extension,
      body: ServiceAccountUpdateBody,
      success: { status: 200, schema: ServiceAccountResponse },
    },
  },
  {
    method: 'DELETE',
    path: '/service_accounts/{id}',
    handler: 'functions/service-accounts/delete.ts',
    auth: 'jwt',
    door: 'rest',
    scope,
    table: 'write',
    doc: {
      summary: 'Delete a service account (admins); its tokens are refused at once; returns it',
      tag,
      extension,
      success: { status: 200, schema: ServiceAccountResponse },
    },
  },
  {
    method: 'POST',
    path: '/service_accounts/{id}/rotate_secret',
    handler: 'functions/service-accounts/rotate-secret.ts',
    auth: 'jwt',
    door: 'rest',
    scope,
    table: 'write',
    doc: {
      summary:
        'Replace the client_secret (admins): the new one is in this response only, the old one gets no more tokens, and the tokens issued before the rotation stop working (401)',
      tag,
      extension,
      success: { status: 200, schema: ServiceAccountWithSecretResponse },
    },
  },
  {
    method: 'POST',
    path: '/oauth/token',
    handler: 'functions/oauth/token.ts',
    auth: 'public',
    door: 'token',
    table: 'read',
    needs: ['kms:sign'],
    rateLimited: true,
    doc: {
      summary:
        'OAuth 2.0 client credentials grant (RFC 6749 section 4.4), form-encoded; client authentication by HTTP Basic or in the body. A token lives 900 s',
      tag,
      extension,
      body: TokenRequestBody,
      bodyMediaType: 'application/x-www-form-urlencoded',
      success: { status: 200, schema: TokenResponse },
      refusals: [
        {
          status: 400,
          description: 'invalid_request, unsupported_grant_type or invalid_scope (RFC 6749 section 5.2)',
          schema: OAuthErrorResponse,
        },
        {
          status: 401,
          description: 'invalid_client: unknown client, wrong secret or disabled account, alike (WWW-Authenticate: Basic)',
          schema: OAuthErrorResponse,
        },
        {
          status: 429,
          description:
            "rate_limited with Retry-After (RFC 6749 section 5.2's shape): failed client authentications past their budget, per client id and per tenant named (the client's right secret too while its own budget is spent), or a proved client's tenant budget; API Gateway's stage throttling answers its own body",
          schema: OAuthErrorResponse,
        },
      ],
    },
  },
];
