import { describe, expect, it } from 'vitest';
import { AppError } from '#shared/errors.ts';
import { BATCH_REFUSED, INVALID_REQUEST, PARSE_ERROR, readMcpMessage, type ReadMessage } from '#shared/mcp/message.ts';
import { readJsonBody } from '#shared/schemas/json-input.ts';

/** The body of a POST /mcp read by the REST body rules (shared/mcp/message.ts), before the SDK sees it. */
const call = (args: string, id = '7') =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"create_checkin","arguments":${args}}}`;

/** What `readJsonBody` says of `text` sent as a REST body. */
function restRefusal(text: string): AppError {
  try {
    readJsonBody(text);
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error(`readJsonBody took ${text}`);
}

const refusalOf = (m: ReadMessage) => {
  if (m.kind !== 'message' || !m.toolCall?.argumentsRefusal) throw new Error(`no arguments refusal: ${JSON.stringify(m)}`);
  const e = m.toolCall.argumentsRefusal;
  return { status: e.status, code: e.code, message: e.message, details: e.details };
};
const asRest = (e: AppError) => ({ status: e.status, code: e.code, message: e.message, details: e.details });

describe('readMcpMessage', () => {
  it('reads one message as readJsonBody does, and names a tools/call with its arguments as read', () => {
    expect(readMcpMessage('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')).toEqual({
      kind: 'message',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    const m = readMcpMessage(call('{"goal_uuid":"g","value":0.1,"note":"é"}'));
    expect(m).toEqual({
      kind: 'message',
      body: JSON.parse(call('{"goal_uuid":"g","value":0.1,"note":"é"}')),
      toolCall: { name: 'create_checkin', arguments: { goal_uuid: 'g', value: 0.1, note: 'é' } },
    });
    // a notification named tools/call runs nothing: not a call (and never charged)
    expect(readMcpMessage('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x","arguments":{}}}')).toEqual({
      kind: 'message',
      body: { jsonrpc: '2.0', method: 'tools/call', params: { name: 'x', arguments: {} } },
    });
  });

  it('refuses a body that is not JSON with -32700, and any JSON array with -32600, whatever it holds', () => {
    for (const text of ['', 'nope', '{"a":', '{"a":1}{"b":2}', '01'])
      expect(readMcpMessage(text)).toEqual({ kind: 'refused', code: PARSE_ERROR, message: 'Parse error: the body is not JSON' });
    const batch = { kind: 'refused', code: INVALID_REQUEST, message: BATCH_REFUSED };
    expect(BATCH_REFUSED).toBe('Invalid Request: a POST carries one JSON-RPC message (MCP 2025-06-18 has no batches)');
    for (const text of ['[]', `[${call('{}')}]`, `[${call('{}')},${call('{}', '8')}]`, `[${call('{"value":1e400}')}]`, '[{"__proto__":1}]'])
      expect(readMcpMessage(text)).toEqual(batch);
    // 20,000 nested arrays: too deep for the reviver, still an array
    expect(readMcpMessage(`${'['.repeat(20_000)}${']'.repeat(20_000)}`)).toEqual(batch);
  });

  it.each([
    ['a number beyond a double', '{"goal_uuid":"g","value":1e400}'],
    ['a number past 2^53', '{"goal_uuid":"g","value":9007199254740993}'],
    ['more digits than a double keeps', '{"goal_uuid":"g","value":1.00000000000000000001}'],
    ['a 100,000-digit number', `{"goal_uuid":"g","value":${'7'.repeat(100_000)}}`],
    ['a lone surrogate', '{"goal_uuid":"g","note":"\\ud800"}'],
    ['a lone surrogate in a key', '{"goal_uuid":"g","\\udfff":1}'],
    ['a NUL', '{"goal_uuid":"g","note":"a\\u0000"}'],
    ['a __proto__ key', '{"goal_uuid":"g","__proto__":{"role":"admin"}}'],
    ['a nested prototype key', '{"goal_uuid":"g","labels":[{"constructor":{"prototype":1}}]}'],
    ['two of them', '{"value":1e400,"note":"\\udc00"}'],
  ])('refuses arguments holding %s with the REST error of the same arguments as a REST body, the message kept', (_, args) => {
    const m = readMcpMessage(call(args));
    expect(refusalOf(m)).toEqual(asRest(restRefusal(args)));
    // the SDK gets the message with empty arguments: nothing of the hostile part reaches it
    expect(m).toMatchObject({
      kind: 'message',
      body: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'create_checkin', arguments: {} } },
      toolCall: { name: 'create_checkin', arguments: {} },
    });
  });

  it('names the field from the arguments, as a REST body would: value, labels.0.constructor', () => {
    expect(refusalOf(readMcpMessage(call('{"value":1e400}'))).details).toEqual([
      { field: 'value', code: 'invalid_number', message: 'must be a finite number' },
    ]);
    expect(refusalOf(readMcpMessage(call('{"labels":[{"constructor":1}]}')))).toMatchObject({
      status: 400,
      code: 'bad_request',
      details: [expect.objectContaining({ field: 'labels.0.constructor' })],
    });
  });

  it.each([
    ['the id', '{"jsonrpc":"2.0","id":1e400,"method":"ping"}', 'id'],
    ['a method', '{"jsonrpc":"2.0","id":1,"method":"\\ud800"}', 'method'],
    ['a tool name', call('{}').replace('"create_checkin"', '"\\ud800"'), 'params.name'],
    [
      '_meta of a tool call',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{},"_meta":{"n":1e400}}}',
      'params._meta.n',
    ],
    ['the id and the arguments', call('{"value":1e400}', '1e400'), 'id'],
    [
      'params of another method',
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"\\udc00"}}}',
      'params.clientInfo.name',
    ],
    ['a prototype key of the envelope', '{"jsonrpc":"2.0","id":1,"method":"ping","__proto__":{}}', '__proto__'],
  ])('refuses a hostile value in %s with -32600 and the REST error, nothing read', (_, text, field) => {
    const m = readMcpMessage(text);
    if (m.kind !== 'refused') throw new Error(JSON.stringify(m));
    expect(m.code).toBe(INVALID_REQUEST);
    expect(m.message).toBe(`Invalid Request: ${m.error!.message}`);
    expect(m.error!.details.map((d) => d.field)).toEqual([field]);
  });

  it('takes arguments apart exactly: numbers as written, strings and keys as sent, own __proto__ keys kept', () => {
    // a hostile value beside every kind of value: the refusal names only it, so the rest was written back as sent
    const args = '{"a":-0,"b":1.5e-7,"c":100,"d":"\\u00e9\\"\\\\","e":[true,false,null,{"f":[]}],"g":{},"h":"\\ud83d\\ude00","z":1e400}';
    expect(refusalOf(readMcpMessage(call(args))).details).toEqual([
      { field: 'z', code: 'invalid_number', message: 'must be a finite number' },
    ]);
    // a duplicate key: the last one counts, as JSON.parse reads it
    expect(refusalOf(readMcpMessage(call('{"v":1,"v":1e400}'))).details.map((d) => d.field)).toEqual(['v']);
    expect(readMcpMessage(call('{"v":1e400,"v":1}'))).toMatchObject({ kind: 'message', toolCall: { arguments: { v: 1 } } });
  });
});
