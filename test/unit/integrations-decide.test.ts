import { describe, expect, it } from 'vitest';
import type { GoalRecord } from '#shared/domain/goals/entity.ts';
import { decided } from '#shared/decision.ts';
import {
  attachDataSource,
  connectorOf,
  dataSourceConfigRefusal,
  decideConnectorRequest as decideRequest,
  decideCreateDataSource,
  newDataSource,
  sourceCreatorScopeRefusal,
  updatedDataSource,
} from '#shared/domain/integrations/decide.ts';

const decideConnectorRequest = (...args: Parameters<typeof decideRequest>) => decided(decideRequest(...args));
import { MAX_DATA_SOURCES_PER_TENANT, REQUESTERS_LISTED } from '#shared/domain/integrations/entity.ts';
import type { HeaderBinding } from '#shared/domain/integrations/sync-rules.ts';
import { ValidationError } from '#shared/errors.ts';
import { callerAs, LATER, NOW, TENANT } from './directory.fixture.ts';

const ann = callerAs('viewer', 'ann');
const bob = callerAs('member', 'bob');

describe('connector request decisions', () => {
  it('the first request creates the record, names collapsed, display name defaulted', () => {
    const first = decideConnectorRequest(ann, TENANT, { connection_type: '  Sales   Force ', request_source: 'catalog' }, undefined, NOW);
    expect(first.created).toBe(true);
    expect(first.record).toEqual({
      uuid: connectorOf(TENANT, { connection_type: 'sales force' }).uuid,
      connection_type: 'Sales Force',
      normalized_key: 'sales force',
      connector_display_name: 'Sales Force',
      request_source: 'catalog',
      requested_by_uuids: ['ann'],
      request_count: 1,
      created_at: NOW,
      updated_at: NOW,
    });
    expect(first.requester).toEqual({ user_uuid: 'ann', requested_at: NOW, request_source: 'catalog' });
  });

  it('later requests only add their requester, listing at most REQUESTERS_LISTED', () => {
    const { record } = decideConnectorRequest(
      ann,
      TENANT,
      { connection_type: 'Jira', connector_display_name: 'Jira Cloud' },
      undefined,
      NOW,
    );
    const second = decideConnectorRequest(
      bob,
      TENANT,
      { connection_type: 'JIRA', connector_display_name: 'other', request_source: 'by_name' },
      record,
      LATER,
    );
    expect(second).toMatchObject({
      created: false,
      record: {
        connector_display_name: 'Jira Cloud',
        request_source: null,
        requested_by_uuids: ['ann', 'bob'],
        request_count: 2,
        updated_at: LATER,
        created_at: NOW,
      },
    });
    const full = { ...record, requested_by_uuids: Array.from({ length: REQUESTERS_LISTED }, (_, i) => `u${i}`), request_count: 500 };
    expect(decideConnectorRequest(bob, TENANT, { connection_type: 'jira' }, full, LATER).record).toMatchObject({
      request_count: 501,
      requested_by_uuids: full.requested_by_uuids,
    });
  });
});

describe('data source decisions', () => {
  const goal = { uuid: 'g', discarded_at: null, archived_at: null, data_sources_count: 2 } as unknown as GoalRecord;

  it('refuses credentials in config, naming each path', () => {
    const err = dataSourceConfigRefusal({
      goal_uuid: 'g',
      name: 'n',
      kind: 'k',
      config: { auth: { apiKey: 'x' }, list: [{ password: 'p' }] },
    }) as ValidationError | undefined;
    expect(err?.details.map((d) => [d.field, d.code])).toEqual([
      ['config.auth.apiKey', 'credential_not_allowed'],
      ['config.list.0.password', 'credential_not_allowed'],
    ]);
    expect(dataSourceConfigRefusal({ goal_uuid: 'g', name: 'n', kind: 'k' })).toBeUndefined();
  });

  it('counts the new data source on the goal; a deleted or archived goal takes none', () => {
    expect(newDataSource(bob, { goal_uuid: 'G-UPPER', name: 'n', kind: 'k' }, NOW, 'ds')).toEqual({
      uuid: 'ds',
      goal_uuid: 'g-upper',
      name: 'n',
      kind: 'k',
      config: {},
      creator_uuid: 'bob',
      creator_kind: 'user',
      status: 'active',
      last_synced_at: null,
      last_value: null,
      last_error: null,
      failures: 0,
      next_run_at: null, // a kind the service does not sync has no schedule
      created_at: NOW,
      updated_at: NOW,
    });
    expect(decided(attachDataSource(goal, LATER))).toMatchObject({ data_sources_count: 3, updated_at: LATER });
    expect(() => decided(attachDataSource({ ...goal, discarded_at: NOW }, LATER))).toThrow('deleted');
    expect(() => decided(attachDataSource({ ...goal, archived_at: NOW }, LATER))).toThrow('archived');
    // the whole create, as read: unknown or invisible goal (hidden), 403 for one it sees but cannot edit, then frozen
    const hidden = () => new ValidationError('unknown goal');
    expect(() => decided(decideCreateDataSource(undefined, undefined, 0, LATER, hidden))).toThrow('unknown goal');
    expect(() => decided(decideCreateDataSource(goal, { canView: false, canEdit: false, source: null }, 0, LATER, hidden))).toThrow(
      'unknown goal',
    );
    expect(() => decided(decideCreateDataSource(goal, { canView: true, canEdit: false, source: 'public' }, 0, LATER, hidden))).toThrow(
      'You cannot change this goal',
    );
    expect(
      decided(decideCreateDataSource(goal, { canView: true, canEdit: true, source: 'owner' }, 0, LATER, hidden)).data_sources_count,
    ).toBe(3);
  });

  it("records its creator's kind; a service account's token creates a source that writes check-ins only while it holds goals:write", () => {
    const sa = { ...callerAs('admin', 'sa-1'), service: { name: 'etl', clientId: 'sa_x' } };
    const scoped = (scopes: string[]) => ({ ...sa, scopes: new Set(scopes) });
    expect(newDataSource(scoped(['data_sources', 'goals:write']), { goal_uuid: 'g', name: 'n', kind: 'push' }, NOW, 'ds')).toMatchObject({
      creator_uuid: 'sa-1',
      creator_kind: 'service_account',
    });
    expect(newDataSource(bob, { goal_uuid: 'g', name: 'n', kind: 'push' }, NOW, 'ds').creator_kind).toBe('user');
    for (const kind of ['push', 'http_json']) {
      expect(sourceCreatorScopeRefusal(scoped(['data_sources', 'goals:write']), kind)).toBeUndefined();
      expect(sourceCreatorScopeRefusal(scoped(['data_sources']), kind)).toMatchObject({
        status: 403,
        code: 'insufficient_scope',
        headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="goals:write"' },
      });
      expect(sourceCreatorScopeRefusal(bob, kind)).toBeUndefined(); // a user's role decides
    }
    // a kind that is a record only writes nothing as its creator
    expect(sourceCreatorScopeRefusal(scoped(['data_sources']), 'manual')).toBeUndefined();
  });

  it("refuses the tenant's 101st data source with 422 too_many, after the goal's own refusals", () => {
    const hidden = () => new ValidationError('unknown goal');
    const editor = { canView: true, canEdit: true, source: 'owner' as const };
    expect(MAX_DATA_SOURCES_PER_TENANT).toBe(100);
    expect(decided(decideCreateDataSource(goal, editor, 99, LATER, hidden)).data_sources_count).toBe(3);
    for (const n of [100, 250]) {
      const d = decideCreateDataSource(goal, editor, n, LATER, hidden);
      expect('error' in d && d.error).toMatchObject({ status: 422, code: 'validation_failed', details: [{ code: 'too_many' }] });
    }
    // who may not create, or on a frozen goal, learns that first
    expect(() => decided(decideCreateDataSource(goal, { ...editor, canEdit: false }, 100, LATER, hidden))).toThrow('You cannot change');
    expect(() => decided(decideCreateDataSource({ ...goal, archived_at: NOW }, editor, 100, LATER, hidden))).toThrow('archived');
  });

  describe("an http_json source's header values follow its origin (contract 19)", () => {
    const cur = newDataSource(bob, { goal_uuid: 'g', name: 'n', kind: 'http_json' }, NOW, 'ds', {
      config: { url: 'https://api.x.test/v1', json_pointer: '/a', every_minutes: 60 },
      headers: { headers_sealed: 'sealed-1', headers_origin: 'https://api.x.test', header_names: ['Authorization'] },
    });
    const moved = (url: string, headers?: HeaderBinding) =>
      updatedDataSource(
        cur,
        { config: { url } },
        { config: { url, json_pointer: '/a', every_minutes: 60 }, ...(headers ? { headers } : {}) },
        LATER,
      );

    it('a new source keeps them bound to the origin they came with, names listed', () => {
      expect(cur).toMatchObject({
        config: { url: 'https://api.x.test/v1', header_names: ['Authorization'] },
        headers_sealed: 'sealed-1',
        headers_origin: 'https://api.x.test',
      });
      const none = newDataSource(bob, { goal_uuid: 'g', name: 'n', kind: 'http_json' }, NOW, 'ds', {
        config: { url: 'https://api.x.test/v1', json_pointer: '/a', every_minutes: 60 },
      });
      expect(none).toMatchObject({ config: { header_names: [] }, headers_sealed: null, headers_origin: null });
    });

    it('a PUT moving the URL to another origin without headers drops them; another path keeps them', () => {
      expect(moved('https://evil.test/v1')).toMatchObject({
        config: { url: 'https://evil.test/v1', header_names: [] },
        headers_sealed: null,
        headers_origin: null,
      });
      for (const url of ['http://api.x.test/v1', 'https://api.x.test:8443/v1'])
        expect(moved(url), url).toMatchObject({ config: { header_names: [] }, headers_sealed: null });
      expect(moved('https://api.x.test/v2?x=1')).toMatchObject({
        config: { url: 'https://api.x.test/v2?x=1', header_names: ['Authorization'] },
        headers_sealed: 'sealed-1',
        headers_origin: 'https://api.x.test',
      });
    });

    it('headers sent with the PUT replace them, bound to the new origin; name or status alone changes nothing of them', () => {
      const sent = { headers_sealed: 'sealed-2', headers_origin: 'https://other.test', header_names: ['X-Key'] };
      expect(moved('https://other.test/v', sent)).toMatchObject({
        config: { url: 'https://other.test/v', header_names: ['X-Key'] },
        headers_sealed: 'sealed-2',
        headers_origin: 'https://other.test',
      });
      const renamed = updatedDataSource(cur, { name: 'renamed', status: 'paused' }, undefined, LATER);
      expect(renamed).toMatchObject({ name: 'renamed', status: 'paused', headers_sealed: 'sealed-1', config: cur.config });
    });
  });
});
