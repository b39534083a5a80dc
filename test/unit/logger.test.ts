import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withKeys } from '#shared/logger.ts';

describe('withKeys: a request view of the container logger', () => {
  afterEach(() => vi.restoreAllMocks());

  it('puts the keys on every line, keeps the extra attributes and formats an Error as Powertools does', () => {
    const lines: string[] = [];
    for (const stream of [process.stdout, process.stderr])
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => (lines.push(String(chunk)), true));
    const base = new Logger({ serviceName: 'test', logLevel: 'DEBUG' });
    const log = withKeys({ request_id: 'r1', tenant_uuid: 't1' }, base);
    log.info('request', { status: 200 });
    log.error('failed', new Error('boom'));
    log.warn({ message: 'object message', x: 1 });
    const [info, error, warn] = lines.map((l) => JSON.parse(l));
    expect(info).toMatchObject({ level: 'INFO', message: 'request', request_id: 'r1', tenant_uuid: 't1', status: 200 });
    expect(error).toMatchObject({ level: 'ERROR', message: 'failed', request_id: 'r1', error: { name: 'Error', message: 'boom' } });
    expect(warn).toMatchObject({ level: 'WARN', message: 'object message', x: 1, request_id: 'r1' });
  });

  it('two requests logging at once keep their own keys (no shared state)', () => {
    const seen: unknown[] = [];
    const base = { debug: () => {}, info: (m: unknown, ..._extra: unknown[]) => void seen.push(m), warn: () => {}, error: () => {} };
    const a = withKeys({ request_id: 'a' }, base);
    const b = withKeys({ request_id: 'b' }, base);
    a.info('x');
    b.info('x');
    a.info('y');
    expect(seen).toEqual([
      { request_id: 'a', message: 'x' },
      { request_id: 'b', message: 'x' },
      { request_id: 'a', message: 'y' },
    ]);
  });
});
