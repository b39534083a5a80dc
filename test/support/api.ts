import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { runAdmin } from '../../scripts/lib/admin-commands.ts';
import { responseProblem } from './openapi-responses.ts';

export interface Res<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/**
 * A tiny HTTP client for the local stack, bound to one bearer token. Every answer is checked against
 * docs/openapi.json (test/support/openapi-responses.ts): a body or status the document does not describe
 * fails the test that received it.
 */
export class Api {
  constructor(
    readonly token: string | undefined,
    readonly baseUrl = inject('apiUrl'),
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res<T>> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      /* leave as text */
    }
    const problem = responseProblem(method, path, res.status, parsed, res.headers.get('content-type'));
    if (problem) throw new Error(`Answer differs from docs/openapi.json: ${problem}`);
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, body?: unknown) {
    return this.request<T>('POST', path, body ?? {});
  }
  put<T = any>(path: string, body?: unknown) {
    return this.request<T>('PUT', path, body ?? {});
  }
  delete<T = any>(path: string, body?: unknown) {
    return this.request<T>('DELETE', path, body);
  }
}

export interface TenantFixture {
  tenantUuid: string;
  adminUuid: string;
  admin: Api;
  /** Creates a user through the API (as the admin) and returns it with a client holding its token. */
  user(opts?: {
    role?: 'admin' | 'member' | 'viewer';
    email?: string;
    display_name?: string;
    extra?: Record<string, unknown>;
  }): Promise<{ uuid: string; api: Api; record: any }>;
  token(userUuid: string, ttl?: number): Promise<string>;
}

/** A fresh tenant with its admin, made with the operator command as support would. */
export async function newTenant(name = `Tenant ${randomUUID().slice(0, 8)}`): Promise<TenantFixture> {
  const out = (await runAdmin(['create-tenant', '--name', name, '--admin-email', `admin-${randomUUID().slice(0, 8)}@example.test`])) as {
    tenant_uuid: string;
    user_uuid: string;
    token: string;
  };
  const admin = new Api(out.token);
  const token = async (userUuid: string, ttl = 3600) =>
    ((await runAdmin(['issue-token', '--tenant', out.tenant_uuid, '--user', userUuid, '--ttl', String(ttl)])) as { token: string }).token;
  return {
    tenantUuid: out.tenant_uuid,
    adminUuid: out.user_uuid,
    admin,
    token,
    async user(opts = {}) {
      const res = await admin.post('/rest/v2/users', {
        user: {
          email: opts.email ?? `user-${randomUUID().slice(0, 8)}@example.test`,
          role: opts.role ?? 'member',
          ...(opts.display_name ? { display_name: opts.display_name } : {}),
          ...(opts.extra ?? {}),
        },
      });
      if (res.status !== 201) throw new Error(`user create failed: ${res.status} ${JSON.stringify(res.body)}`);
      const uuid = res.body.data.record.uuid as string;
      return { uuid, api: new Api(await token(uuid)), record: res.body.data.record };
    },
  };
}

/** Asserts the contract's error shape and returns the error object. */
export function expectError(res: Res, status: number, code?: string) {
  if (res.status !== status || (code && res.body?.error?.code !== code)) {
    throw new Error(`expected ${status}${code ? ` ${code}` : ''}, got ${res.status}: ${JSON.stringify(res.body)}`);
  }
  const e = res.body.error;
  if (typeof e?.message !== 'string' || typeof e?.request_id !== 'string' || !Array.isArray(e?.details) || e.status !== status) {
    throw new Error(`error body not in contract shape: ${JSON.stringify(res.body)}`);
  }
  return e as {
    status: number;
    code: string;
    message: string;
    details: Array<{ field?: string; code: string; message: string }>;
    request_id: string;
  };
}

/** Pages through a list endpoint and returns every record. */
export async function listAll(api: Api, path: string, perPage = 100): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await api.get(`${path}${sep}page=${page}&per_page=${perPage}`);
    if (res.status !== 200) throw new Error(`list failed: ${res.status} ${JSON.stringify(res.body)}`);
    out.push(...res.body.data.records);
    if (!res.body.data.pagy.next) return out;
  }
}
