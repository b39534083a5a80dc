import { AppError } from '#shared/errors.ts';
import { readJsonBody } from '#shared/schemas/json-input.ts';

/**
 * The body of a POST /mcp, read by the rules every REST body meets (shared/schemas/json-input.ts, `readJsonBody`:
 * the JSON number rules, well-formed strings and keys, and whatever it refuses besides) before the MCP SDK sees
 * it, and the one JSON-RPC message it must be (contract sections 15 and 19):
 *
 *  - not JSON: JSON-RPC -32700 (Parse error);
 *  - a JSON array: JSON-RPC -32600 (Invalid Request), whatever it holds: MCP 2025-06-18 has no batches, and a POST
 *    is one message, so that the limiter charges each tool call (shared/mcp/handler.ts);
 *  - a value that breaks a rule in a tools/call's `arguments` (and nowhere else): the message is read with empty
 *    arguments and the call carries the refusal, the REST error of the same arguments sent as a REST body (fields
 *    named from the arguments, as a REST body's are), which the call answers as its refused tool result;
 *  - a value that breaks a rule anywhere else (the id, the method, a tool's name, `_meta`, another method's
 *    params): JSON-RPC -32600 with the REST error's `error` object as its `data`.
 *
 * Nothing here runs the SDK or the limiter; every refusal is decided before either.
 */

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

export type ReadMessage =
  /** Answered with a JSON-RPC error (HTTP 400, id null): nothing runs. `error`: the REST refusal, the error's data. */
  | { kind: 'refused'; code: typeof PARSE_ERROR | typeof INVALID_REQUEST; message: string; error?: AppError }
  /** One message, its values as `readJsonBody` returns them; `toolCall` when it is a tools/call request. */
  | { kind: 'message'; body: unknown; toolCall?: ToolCallMessage };

export interface ToolCallMessage {
  name: string;
  /** The call's arguments as read (own keys as sent; never the SDK's copy of them). */
  arguments: unknown;
  /** The refusal of arguments that break a rule: the call answers it, runs nothing and is not charged. */
  argumentsRefusal?: AppError;
}

export const BATCH_REFUSED = 'Invalid Request: a POST carries one JSON-RPC message (MCP 2025-06-18 has no batches)';
const NOT_JSON = 'Parse error: the body is not JSON';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A tools/call request (with an id: a notification runs nothing) naming its tool, its params and arguments. */
function toolCallParts(v: unknown): { params: Record<string, unknown>; name: string; arguments: unknown } | undefined {
  if (!isObject(v) || v.method !== 'tools/call' || !Object.hasOwn(v, 'id')) return undefined;
  const params = v.params;
  if (!isObject(params) || typeof params.name !== 'string') return undefined;
  return { params, name: params.name, arguments: params.arguments };
}

const batchRefused = (): ReadMessage => ({ kind: 'refused', code: INVALID_REQUEST, message: BATCH_REFUSED });
const invalid = (error: AppError): ReadMessage => ({
  kind: 'refused',
  code: INVALID_REQUEST,
  message: `Invalid Request: ${error.message}`,
  error,
});

/** Reads the text of a POST /mcp (see above). Throws only what `readJsonBody` throws that is not an AppError. */
export function readMcpMessage(text: string): ReadMessage {
  let body: unknown;
  try {
    body = readJsonBody(text);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return readRefused(text, err);
  }
  if (Array.isArray(body)) return batchRefused();
  const call = toolCallParts(body);
  return { kind: 'message', body, ...(call ? { toolCall: { name: call.name, arguments: call.arguments } } : {}) };
}

/** `readJsonBody` refused the text with `err`: say whether it is JSON, an array, or where the broken value is. */
function readRefused(text: string, err: AppError): ReadMessage {
  let plain: unknown;
  try {
    plain = JSON.parse(text); // no reviver: linear in the text however deep it nests, and only on this path
  } catch {
    return { kind: 'refused', code: PARSE_ERROR, message: NOT_JSON };
  }
  if (Array.isArray(plain)) return batchRefused();
  if (!toolCallParts(plain)) return invalid(err);
  const split = splitArguments(text);
  if (!split) return invalid(err); // too deep to take apart (the arguments alone would be refused the same)
  let envelope: unknown;
  try {
    envelope = readJsonBody(split.envelope);
  } catch (e) {
    return invalid(e instanceof AppError ? e : err);
  }
  let argumentsRefusal = err;
  try {
    readJsonBody(split.arguments);
  } catch (e) {
    if (e instanceof AppError) argumentsRefusal = e;
  }
  const call = toolCallParts(envelope)!;
  return { kind: 'message', body: envelope, toolCall: { name: call.name, arguments: {}, argumentsRefusal } };
}

/** A number as its JSON text, so that a value is written back exactly as it was sent. */
class NumberText {
  constructor(readonly text: string) {}
}

/**
 * A tools/call's text as two JSON texts that say exactly what the client sent: the message with empty
 * arguments, and the arguments. Numbers keep their source text (JSON.parse's reviver context), strings are
 * written by JSON.stringify (a lone surrogate as its `\uXXXX` escape, which reads back as the same lone
 * surrogate) and keys stay own keys (`__proto__` included), so `readJsonBody` finds in each part what it found
 * in the whole. Undefined when the text nests too deep for the reviver or the writer.
 */
function splitArguments(text: string): { envelope: string; arguments: string } | undefined {
  try {
    const v = JSON.parse(text, (_key, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' ? new NumberText(context?.source ?? String(value)) : value,
    ) as unknown;
    const call = toolCallParts(v);
    if (!call) return undefined;
    // spreads copy own keys as own keys (CreateDataProperty), `__proto__` included
    const envelope = { ...(v as Record<string, unknown>), params: { ...call.params, arguments: {} } };
    return { envelope: writeJson(envelope), arguments: writeJson(call.arguments) };
  } catch {
    return undefined; // a stack overflow of either
  }
}

function writeJson(v: unknown): string {
  if (v instanceof NumberText) return v.text;
  if (Array.isArray(v)) return `[${v.map(writeJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${writeJson(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** A JSON-RPC error answer of /mcp (the shape of the SDK's own transport errors: id null, HTTP 400). */
export function jsonRpcError(
  code: number,
  message: string,
  data?: unknown,
): { statusCode: number; headers: Record<string, string>; body: string } {
  return {
    statusCode: 400,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data === undefined ? {} : { data }) }, id: null }),
  };
}
