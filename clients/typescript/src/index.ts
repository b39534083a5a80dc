import createClient, { type Client, type ClientOptions, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema.ts';

export type { components, operations, paths };

/** The API's record and body schemas by name, e.g. `Schemas['Goal']`. */
export type Schemas = components['schemas'];
export type Goal = Schemas['Goal'];
export type GoalCreateBody = Schemas['GoalCreateBody'];
export type GoalUpdateBody = Schemas['GoalUpdateBody'];
export type Checkin = Schemas['Checkin'];
export type CheckinCreateBody = Schemas['CheckinCreateBody'];
export type CheckinUpdateBody = Schemas['CheckinUpdateBody'];
export type TimePeriod = Schemas['TimePeriod'];
export type User = Schemas['User'];
export type Team = Schemas['Team'];
export type Label = Schemas['Label'];

/** A client whose every call is typed by docs/openapi.json: `client.GET('/rest/v2/objectives/{id}', { params: { path: { id } } })`. */
export type GoalTrackingClient = Client<paths>;

export interface GoalTrackingClientOptions extends ClientOptions {
  /** The API's base URL, e.g. `https://api.example.com` (no trailing slash needed). */
  baseUrl: string;
  /** A bearer token, or a function returning a fresh one before each request. */
  token?: string | (() => string | Promise<string>);
}

/** Sets `Authorization: Bearer <token>` on every request. */
export function bearerToken(token: string | (() => string | Promise<string>)): Middleware {
  return {
    async onRequest({ request }) {
      request.headers.set('authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
      return request;
    },
  };
}

/** A typed client of the Goal-tracking API (openapi-fetch over the generated types). */
export function createGoalTrackingClient({ token, ...options }: GoalTrackingClientOptions): GoalTrackingClient {
  const client = createClient<paths>(options);
  if (token !== undefined) client.use(bearerToken(token));
  return client;
}

export { ListPageError, pages, records, type ListPath, type PagesOptions, type PageOf, type RecordOf } from './pages.ts';
