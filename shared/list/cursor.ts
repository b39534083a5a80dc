import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { idSeedSecret } from '#shared/auth/id-seed-secret.ts';
import { BadRequestError } from '#shared/errors.ts';

/**
 * List cursors (contract 18): an opaque `pagy.next_cursor` holding the position of a page's last record, so the
 * next page starts right after it however many records were created or deleted meanwhile (keyset paging).
 *
 * A position is the record's sort value (absent in creation order) and its creation key (its list sort key,
 * `<created_at>#<uuid>`), the tiebreak that makes the order total. The cursor is `c1.<payload>.<mac>`: the payload
 * (base64url JSON) also names its list's binding (a hash of tenant, resource and its lists, filters and sort), and
 * the MAC (HMAC-SHA256 with a server secret, cut to 128 bits) covers it, so a client can neither forge a position
 * nor move a cursor to another tenant, list, filter or sort: each is a 400, and a valid cursor's position only
 * says where to start in the caller's own list (what it may see is judged as on every page).
 */
export interface Position {
  /** The sort attribute's value (null when the record has none); absent in creation order. */
  v?: unknown;
  /** The record's list sort key (creation order), the tiebreak. */
  k: string;
}

const PREFIX = 'c1';
/** Longer than any cursor this service issues (a long sort value included): a longer one is refused unread. */
const MAX_LENGTH = 2048;
const LABEL = 'goal-tracking/list-cursor/v1';

let secret: Promise<Buffer> | undefined;

/** The cursors' key: derived from the id-seed secret (its own label, so neither key's MACs stand for the other's). */
function cursorSecret(): Promise<Buffer> {
  secret ??= idSeedSecret().then((s) => createHmac('sha256', s).update(LABEL).digest());
  secret.catch(() => (secret = undefined)); // a failed KMS call is not kept
  return secret;
}

/** What a cursor is bound to, as one short hash: the same list, filters and sort in the same tenant. */
export function cursorBinding(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 22);
}

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(`${PREFIX}.${payload}`).digest().subarray(0, 16);

/** The cursor of `position` in the list `binding` names. */
export async function sealCursor(binding: string, position: Position): Promise<string> {
  const payload = Buffer.from(JSON.stringify({ b: binding, ...position }), 'utf8').toString('base64url');
  return `${PREFIX}.${payload}.${mac(await cursorSecret(), payload).toString('base64url')}`;
}

const refused = (message: string) => new BadRequestError(message, [{ field: 'cursor', code: 'invalid_cursor', message }]);

/** The position a cursor holds, when it is this service's and names this list; else 400 in the error shape. */
export async function openCursor(binding: string, cursor: string): Promise<Position> {
  const parts = cursor.length <= MAX_LENGTH ? cursor.split('.') : [];
  if (parts.length !== 3 || parts[0] !== PREFIX || !/^[\w-]+$/.test(parts[1]!) || !/^[\w-]{22}$/.test(parts[2]!))
    throw refused('cursor is not a cursor this service issued (send pagy.next_cursor as it came)');
  const [, payload, sent] = parts as [string, string, string];
  // compared as issued, text to text: the MAC's last base64url character carries 4 padding bits, so decoding would
  // take a cursor with those bits changed (an altered cursor) for the one issued
  const expected = Buffer.from(mac(await cursorSecret(), payload).toString('base64url'));
  const got = Buffer.from(sent);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw refused('cursor was altered or not issued by this service');
  let body: { b?: unknown; v?: unknown; k?: unknown };
  try {
    body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refused('cursor is not readable');
  }
  if (body.b !== binding)
    throw refused('cursor belongs to another list: page on with the same list, filters and sort the cursor came from');
  if (typeof body.k !== 'string') throw refused('cursor is not readable');
  return 'v' in body ? { v: body.v, k: body.k } : { k: body.k };
}
