/**
 * Data-source sync (contract section 16), the pure part: the http_json config's rules, the RFC 6901 pointer,
 * reading a number out of a fetched body, and how a sync's outcome moves the source. No I/O, no clock.
 */
import type { DataSourceRecord, DataSourceStatus, SyncStatus } from '#shared/domain/integrations/entity.ts';
import type { ErrorDetail } from '#shared/errors.ts';

export const EVERY_MINUTES_MIN = 15;
export const EVERY_MINUTES_MAX = 1440;
export const EVERY_MINUTES_DEFAULT = 60;
/** Failed syncs in a row that make a source `failing`; a failing source is tried hourly. */
export const FAILURES_BEFORE_FAILING = 10;
export const FAILING_RETRY_MINUTES = 60;
/** The largest body a sync reads (contract: 1 MB). */
export const SYNC_BODY_CAP = 1024 * 1024;
const MAX_HEADERS = 20;
const MAX_HEADER_VALUE = 4096;
/** Header names a source may not set: the request's framing and target are the service's. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade', 'te', 'trailer']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** An http_json config as stored: header values are apart (sealed), only their names kept (sorted; absent on old records: none). */
export interface HttpJsonConfig {
  url: string;
  json_pointer: string;
  every_minutes: number;
  header_names?: string[];
}

/**
 * A valid config split into what is stored in clear and the header values to seal (`headers`: sent, else
 * undefined). Which header values the source keeps is not decided here: see headersKept.
 */
export interface HttpJsonSettings {
  config: Omit<HttpJsonConfig, 'header_names'>;
  headers: Record<string, string> | undefined;
}

/**
 * The header values a source holds (contract 19: "a secret is sent only where it was given"): sealed, bound to
 * the origin (scheme, host, port) of the URL they were given with, which the seal's context names too; their
 * names sorted, as `config.header_names` presents them.
 */
export interface HeaderBinding {
  headers_sealed: string | null;
  headers_origin: string | null;
  header_names: string[];
}

export const NO_HEADERS: HeaderBinding = { headers_sealed: null, headers_origin: null, header_names: [] };

/** The origin of a URL already judged valid (`https://host:port`, the default port left out, the host lower-cased). */
export const originOf = (url: string): string => new URL(url).origin;

/** Header names as presented and stored: sorted (code-point order). */
export const sortedHeaderNames = (headers: Record<string, string>): string[] => Object.keys(headers).sort();

/**
 * What a source keeps of its header values when a PUT moves its URL to `url` without sending headers: all of
 * them while the origin stays the one they were given with (another path, query or fragment), none when it
 * moves (another scheme, host or port), and none for values stored before they were bound to an origin (where
 * they were given is unknown).
 */
export function headersKept(current: Pick<DataSourceRecord, 'headers_sealed' | 'headers_origin' | 'config'>, url: string): HeaderBinding {
  if (!current.headers_sealed || !current.headers_origin || current.headers_origin !== originOf(url)) return NO_HEADERS;
  const names = (current.config as Partial<HttpJsonConfig>).header_names;
  return {
    headers_sealed: current.headers_sealed,
    headers_origin: current.headers_origin,
    header_names: Array.isArray(names) ? [...names].sort() : [],
  };
}

/**
 * Whether a fetch of `url` may carry the source's header values, and why not: only to the origin they were bound
 * to (checked again at every fetch, whatever wrote the record).
 */
export function headersRefusal(source: Pick<DataSourceRecord, 'headers_sealed' | 'headers_origin'>, url: URL): string | undefined {
  if (!source.headers_sealed) return undefined;
  if (!source.headers_origin)
    return 'its header values were stored before they were bound to an origin and are not sent: send config.headers again';
  if (source.headers_origin !== url.origin)
    return `its header values were given for ${source.headers_origin} and are not sent to ${url.origin}: send config.headers again`;
  return undefined;
}

const KNOWN_KEYS = new Set(['url', 'json_pointer', 'headers', 'every_minutes']);
/** What a client reads in a config but may not send: the service's (a client changes header names by sending headers). */
const READ_ONLY_KEYS = new Set(['header_names']);

/** Whether a string is an RFC 6901 JSON pointer ('' or '/'-separated tokens, `~` only as `~0` or `~1`). */
export const isJsonPointer = (p: string) => p === '' || (p.startsWith('/') && !/~(?![01])/.test(p));

/**
 * An http_json config's problems as 422 details (field paths under `config`), or its settings. `current`: the
 * stored config a PUT changes (its fields stay unless sent; headers sent replace the old ones, headersKept says
 * what stays of them otherwise).
 */
export function httpJsonSettings(raw: Record<string, unknown>, current?: HttpJsonConfig): { errors: ErrorDetail[] } | HttpJsonSettings {
  const errors: ErrorDetail[] = [];
  const bad = (field: string, code: string, message: string) => errors.push({ field: `config.${field}`, code, message });
  for (const k of Object.keys(raw))
    if (READ_ONLY_KEYS.has(k)) bad(k, 'read_only', `${k} is the service's: send headers to set the header values (and so their names)`);
    else if (!KNOWN_KEYS.has(k)) bad(k, 'unknown_field', `${k} is not an http_json setting (url, json_pointer, headers, every_minutes)`);
  const url = raw.url ?? current?.url;
  if (typeof url !== 'string' || !url) bad('url', 'required', 'url is required: the https URL of a JSON document');
  const pointer = raw.json_pointer ?? current?.json_pointer;
  if (typeof pointer !== 'string') bad('json_pointer', 'required', 'json_pointer is required: an RFC 6901 pointer such as /data/total');
  else if (!isJsonPointer(pointer))
    bad('json_pointer', 'invalid', 'json_pointer must be an RFC 6901 pointer: empty, or starting with / (~ only as ~0 or ~1)');
  const every = raw.every_minutes ?? current?.every_minutes ?? EVERY_MINUTES_DEFAULT;
  if (typeof every !== 'number' || !Number.isInteger(every) || every < EVERY_MINUTES_MIN || every > EVERY_MINUTES_MAX)
    bad('every_minutes', 'out_of_range', `every_minutes must be a whole number from ${EVERY_MINUTES_MIN} to ${EVERY_MINUTES_MAX}`);
  let headers: Record<string, string> | undefined;
  if (raw.headers !== undefined) {
    if (raw.headers === null || typeof raw.headers !== 'object' || Array.isArray(raw.headers))
      bad('headers', 'invalid', 'headers must be an object of header names to string values');
    else {
      const entries = Object.entries(raw.headers);
      if (entries.length > MAX_HEADERS) bad('headers', 'too_many', `at most ${MAX_HEADERS} headers`);
      const seen = new Set<string>();
      for (const [name, value] of entries) {
        const lower = name.toLowerCase();
        if (seen.has(lower)) bad(`headers.${name}`, 'duplicate', 'header names are case-insensitive: this one is sent twice');
        seen.add(lower);
        if (!TOKEN.test(name)) bad(`headers.${name}`, 'invalid', 'not a valid header name');
        else if (RESERVED_HEADERS.has(name.toLowerCase())) bad(`headers.${name}`, 'reserved', `${name} is set by the service`);
        else if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(value))
          bad(`headers.${name}`, 'invalid', `must be a string of at most ${MAX_HEADER_VALUE} characters without line breaks`);
      }
      headers = raw.headers as Record<string, string>;
    }
  }
  if (errors.length) return { errors };
  return { config: { url: url as string, json_pointer: pointer as string, every_minutes: every as number }, headers };
}

/** The value at an RFC 6901 pointer, or `missing`. Own properties only (never the prototype's). */
export function atPointer(doc: unknown, pointer: string): { found: true; value: unknown } | { found: false } {
  if (pointer === '') return { found: true, value: doc };
  let at: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token) || Number(token) >= at.length) return { found: false };
      at = at[Number(token)];
    } else if (at !== null && typeof at === 'object' && Object.hasOwn(at, token)) {
      at = (at as Record<string, unknown>)[token];
    } else return { found: false };
  }
  return { found: true, value: at };
}

/** The number a fetched body holds at the pointer, or why there is none (a failed sync's error). */
export function numberAt(body: string, pointer: string): { value: number } | { error: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return { error: 'the answer is not JSON' };
  }
  const found = atPointer(doc, pointer);
  if (!found.found) return { error: `nothing at json_pointer ${pointer || '(whole document)'}` };
  const v = found.value;
  // a numeric string ("42.5") is a number a spreadsheet or a report would give; anything else is not
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) return { error: `the value at json_pointer ${pointer || '(whole document)'} is not a number` };
  return { value: n };
}

/** The source after a sync with this outcome at `now` (pure): status, counters, last_*, and the next scheduled run. */
export function sourceAfterSync(
  source: DataSourceRecord,
  outcome: { status: SyncStatus; value: number | null; error: string | null },
  now: string,
): { source: DataSourceRecord; becameFailing: boolean } {
  const failed = outcome.status === 'failed';
  const failures = failed ? (source.failures ?? 0) + 1 : 0;
  const was: DataSourceStatus = source.status ?? 'active';
  const status: DataSourceStatus =
    was === 'paused' ? 'paused' : failed ? (failures >= FAILURES_BEFORE_FAILING ? 'failing' : was) : 'active';
  const next = {
    ...source,
    status,
    failures,
    last_synced_at: now,
    last_value: failed ? (source.last_value ?? null) : outcome.value,
    last_error: failed ? outcome.error : null,
    updated_at: now,
  };
  next.next_run_at = nextRunAt(next, now);
  return { source: next, becameFailing: was !== 'failing' && status === 'failing' };
}

/** When a source's next scheduled sync is due from `from`: its period, hourly while failing; null for a paused or unsynced kind. */
export function nextRunAt(source: DataSourceRecord, from: string): string | null {
  if (source.kind !== 'http_json' || source.status === 'paused') return null;
  const minutes =
    source.status === 'failing' ? FAILING_RETRY_MINUTES : Number((source.config as Partial<HttpJsonConfig>).every_minutes ?? 60);
  return new Date(Date.parse(from) + minutes * 60_000).toISOString();
}
