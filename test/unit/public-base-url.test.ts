import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { config } from '#shared/config.ts';
import type { TeamRecord } from '#shared/domain/teams/entity.ts';
import { newUserRecord } from '#shared/domain/users/entity.ts';
import { mcpResourceUrl, resourceMetadataUrl } from '#shared/mcp/base-url.ts';
import { resourceTypes, schemaDocuments, serviceProviderConfig, toScimGroup, toScimUser } from '#shared/scim/resources.ts';

/**
 * The name the service gives itself (contract sections 15 and 17): the configured public base URL, never a
 * request's Host or x-forwarded-proto header, which a client chooses.
 */
describe('the public base URL', () => {
  const saved = process.env.API_BASE_URL;
  beforeEach(() => {
    process.env.API_BASE_URL = 'https://api.example.test/';
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.API_BASE_URL;
    else process.env.API_BASE_URL = saved;
  });

  it('is read from API_BASE_URL, without its trailing slash; unset or not http(s), it fails instead of guessing', () => {
    expect(config.apiBaseUrl).toBe('https://api.example.test');
    process.env.API_BASE_URL = 'http://127.0.0.1:3000';
    expect(config.apiBaseUrl).toBe('http://127.0.0.1:3000');
    delete process.env.API_BASE_URL;
    expect(() => config.apiBaseUrl).toThrow(/API_BASE_URL/);
    process.env.API_BASE_URL = 'javascript:alert(1)';
    expect(() => config.apiBaseUrl).toThrow(/http\(s\)/);
    process.env.API_BASE_URL = 'not a url';
    expect(() => config.apiBaseUrl).toThrow();
  });

  it('names the MCP resource and its RFC 9728 document', () => {
    expect(mcpResourceUrl()).toBe('https://api.example.test/mcp');
    expect(resourceMetadataUrl()).toBe('https://api.example.test/.well-known/oauth-protected-resource');
  });

  it("makes every SCIM meta.location and member $ref absolute (RFC 7643 section 3.1); a resource type's endpoint stays relative (section 6)", () => {
    const user = newUserRecord({ email: 'a@b.test', creator_uuid: null }, '2026-01-01T00:00:00.000Z', 'u1');
    expect(toScimUser(user).meta.location).toBe('https://api.example.test/scim/v2/Users/u1');
    const at = '2026-01-01T00:00:00.000Z';
    const team: TeamRecord = {
      uuid: 't1',
      created_at: at,
      updated_at: at,
      name: 'T',
      display_name: 'T',
      parent_uuid: null,
      owner_uuids: [],
      member_uuids: ['u1'],
      status: 'active',
      is_org: false,
      depth: 0,
      creator_uuid: null,
    };
    const group = toScimGroup(team, new Map([['u1', user]]));
    expect(group.meta.location).toBe('https://api.example.test/scim/v2/Groups/t1');
    expect(group.members).toEqual([{ value: 'u1', display: user.display_name, $ref: 'https://api.example.test/scim/v2/Users/u1' }]);
    expect(serviceProviderConfig().meta.location).toBe('https://api.example.test/scim/v2/ServiceProviderConfig');
    expect(resourceTypes().map((t) => [t.endpoint, t.meta.location])).toEqual([
      ['/Users', 'https://api.example.test/scim/v2/ResourceTypes/User'],
      ['/Groups', 'https://api.example.test/scim/v2/ResourceTypes/Group'],
    ]);
    for (const s of schemaDocuments()) expect(s.meta.location).toBe(`https://api.example.test/scim/v2/Schemas/${s.id}`);
  });
});
