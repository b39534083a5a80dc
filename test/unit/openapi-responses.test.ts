import { describe, expect, it } from 'vitest';
import { responseProblem } from '../support/openapi-responses.ts';

/** The response check every end-to-end request goes through (test/support/api.ts) finds drift, not noise. */
describe('responses checked against docs/openapi.json', () => {
  const rec = {
    uuid: 'a',
    name: 'n',
    is_group: false,
    parent_uuid: null,
    color: null,
    creator_uuid: null,
    created_at: 'x',
    updated_at: 'y',
  };
  const label = (record: Record<string, unknown>) => ({
    data: { type: 'label', record, checks: { can_update: true }, access_source: 'admin' },
  });
  const json = 'application/json';

  it('accepts what the document describes, whatever the query string or the id', () => {
    expect(responseProblem('GET', '/rest/v2/labels/ABC?x=1', 200, label(rec), json)).toBeUndefined();
    expect(
      responseProblem(
        'GET',
        '/rest/v2/labels/abc',
        404,
        { error: { status: 404, code: 'not_found', message: 'm', details: [], request_id: 'r' } },
        json,
      ),
    ).toBeUndefined();
    expect(responseProblem('GET', '/no/such/route', 404, { message: 'Not Found' }, json)).toBeUndefined();
    expect(responseProblem('GET', '/rest/v2/labels', 401, { message: 'Unauthorized' }, json)).toBeUndefined();
  });

  it('finds fields the document does not name, missing fields and wrong types', () => {
    expect(responseProblem('GET', '/rest/v2/labels/abc', 200, label({ ...rec, extra: 1 }), json)).toMatch(
      /unevaluated properties \(extra\)/,
    );
    expect(responseProblem('GET', '/rest/v2/labels/abc', 200, label({ ...rec, name: undefined }), json)).toMatch(
      /required property 'name'/,
    );
    expect(responseProblem('GET', '/rest/v2/labels/abc', 200, label({ ...rec, is_group: 'no' }), json)).toMatch(/is_group/);
  });

  it('finds undocumented success statuses and errors outside the contract shape', () => {
    expect(responseProblem('POST', '/rest/v2/labels', 200, label(rec), json)).toMatch(/status not documented/);
    expect(responseProblem('POST', '/rest/v2/labels', 415, { message: 'Unsupported' }, json)).toMatch(/contract's shape/);
    expect(
      responseProblem(
        'POST',
        '/rest/v2/labels',
        422,
        { error: { status: 400, code: 'x', message: 'm', details: [], request_id: 'r' } },
        json,
      ),
    ).toMatch(/differs from the HTTP status/);
  });

  it('prefers a literal path segment over a parameter', () => {
    expect(
      responseProblem('GET', '/documents/abc/access_requests/mine', 200, { data: { type: 'access_request', record: null } }, json),
    ).toBeUndefined();
  });

  it('takes no status a SCIM operation does not document, such as 422, and no relative meta.location', () => {
    const scimError = { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '422', scimType: 'invalidValue', detail: 'd' };
    expect(responseProblem('POST', '/scim/v2/Users', 422, scimError, 'application/scim+json')).toMatch(/status not documented/);
    const at = '2026-01-01T00:00:00.000Z';
    const user = (location: string) => ({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      id: 'u1',
      userName: 'a@b.test',
      meta: { resourceType: 'User', created: at, lastModified: at, location, version: `W/"${at}"` },
    });
    expect(
      responseProblem('GET', '/scim/v2/Users/u1', 200, user('https://api.example.test/scim/v2/Users/u1'), 'application/scim+json'),
    ).toBeUndefined();
    expect(responseProblem('GET', '/scim/v2/Users/u1', 200, user('/scim/v2/Users/u1'), 'application/scim+json')).toMatch(/location/);
  });
});
