import { describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { bodyValidation } from '#shared/http/middleware/body-validation.ts';
import type { ReadBody } from '#shared/http/transport.ts';
import { before, fakeRequest, status } from './support/middleware-request.ts';

const Schema = z.strictObject({ name: z.string().min(2) });
const withRead = (read?: ReadBody) => fakeRequest({ internal: read ? { read } : {} });

describe('bodyValidation middleware', () => {
  it('starts loading the route`s schema at once, and checks the body only when body() is called', async () => {
    const load = vi.fn(async () => Schema);
    const parse = vi.spyOn(Schema, 'safeParse');
    const request = withRead({ kind: 'json', value: { name: 'ok' } });
    await before(bodyValidation(load), request);
    expect(load).toHaveBeenCalledTimes(1);
    expect(parse).not.toHaveBeenCalled();
    await expect(request.internal.body()).resolves.toEqual({ name: 'ok' });
    await expect(request.internal.body()).resolves.toEqual({ name: 'ok' });
    expect(parse).toHaveBeenCalledTimes(1); // checked once, whoever asks (the handler or the replay gate)
    parse.mockRestore();
  });

  it('loads the schema once per handler, not per request', async () => {
    const load = vi.fn(async () => Schema);
    const mw = bodyValidation(load);
    for (const name of ['ab', 'cd']) {
      const request = withRead({ kind: 'json', value: { name } });
      await before(mw, request);
      await expect(request.internal.body()).resolves.toEqual({ name });
    }
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('400 for an unknown field or a wrong type, 422 for a broken rule, an absent body being {}', async () => {
    const cases: Array<[ReadBody | undefined, number | string]> = [
      [{ kind: 'json', value: { name: 'ok', extra: 1 } }, 400],
      [{ kind: 'json', value: { name: 5 } }, 400],
      [{ kind: 'json', value: { name: 'x' } }, 422],
      [undefined, 400], // no body: {} misses the required name, a wrong type (undefined)
    ];
    for (const [read, want] of cases) {
      const request = withRead(read);
      await before(
        bodyValidation(async () => Schema),
        request,
      );
      expect(await status(request.internal.body()), JSON.stringify(read)).toBe(want);
    }
  });

  it('a route without a schema: no body is undefined and loads nothing; a JSON body with fields is 400', async () => {
    const none = withRead();
    await before(bodyValidation(undefined), none);
    await expect(none.internal.body()).resolves.toBeUndefined();
    const empty = withRead({ kind: 'json', value: {} });
    await before(bodyValidation(undefined), empty);
    await expect(empty.internal.body()).resolves.toBeUndefined();
    const fields = withRead({ kind: 'json', value: { a: 1 } });
    await before(bodyValidation(undefined), fields);
    expect(await status(fields.internal.body())).toBe(400);
  });

  it('a body of another accepted media type is not checked against the JSON schema', async () => {
    const load = vi.fn(async () => Schema);
    const request = withRead({ kind: 'raw', mediaType: 'text/csv', text: 'a,b' });
    await before(bodyValidation(load), request);
    expect(load).not.toHaveBeenCalled();
    await expect(request.internal.body()).resolves.toBeUndefined();
  });
});
