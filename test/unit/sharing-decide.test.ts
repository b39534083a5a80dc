import { describe, expect, it } from 'vitest';
import { decided } from '#shared/decision.ts';
import * as rules from '#shared/domain/sharing/decide.ts';
import { resolveByGrant, RESEND_WINDOW_MS } from '#shared/domain/sharing/decide.ts';

// the decisions unwrapped: a refusal is thrown (each returns a Decision)
const decideCreateShareable = (...a: Parameters<typeof rules.decideCreateShareable>) => decided(rules.decideCreateShareable(...a));
const decideGrant = (...a: Parameters<typeof rules.decideGrant>) => decided(rules.decideGrant(...a));
const decideSetGrant = (...a: Parameters<typeof rules.decideSetGrant>) => decided(rules.decideSetGrant(...a));
const decideRequestAccess = (...a: Parameters<typeof rules.decideRequestAccess>) => decided(rules.decideRequestAccess(...a));
const decideResend = (...a: Parameters<typeof rules.decideResend>) => decided(rules.decideResend(...a));
const decideView = (...a: Parameters<typeof rules.decideView>) => decided(rules.decideView(...a));
import { MAX_MANAGERS, type AccessRequestRecord, type Grant, type ShareableRecord } from '#shared/domain/sharing/entity.ts';
import { ForbiddenError } from '#shared/errors.ts';
import { callerAs, LATER, NOW, user, codeOf } from './directory.fixture.ts';

const owner = callerAs('member', 'owner');
const admin = callerAs('admin');
const stranger = callerAs('member', 'stranger');
const grant = (user_uuid: string, level: Grant['level']): Grant => ({ user_uuid, level, granted_by_uuid: 'owner', granted_at: NOW });
const doc = (grants: Grant[] = []): ShareableRecord => ({
  ...decideCreateShareable(owner, 'documents', { title: 'Plan' }, NOW, 'd-1'),
  grants,
});

const request = (over: Partial<AccessRequestRecord> = {}): AccessRequestRecord => ({
  uuid: 'r-1',
  shareable_type: 'documents',
  shareable_uuid: 'd-1',
  requester_uuid: 'stranger',
  requested_level: 'view',
  message: null,
  status: 'pending',
  created_at: NOW,
  updated_at: NOW,
  last_email_sent_at: NOW,
  resolved_at: null,
  resolved_by_uuid: null,
  ...over,
});

describe('shareable decisions', () => {
  it('creates owned by the caller (not viewers); only holders of a level view it', () => {
    expect(doc()).toEqual({
      uuid: 'd-1',
      type: 'document',
      title: 'Plan',
      content: null,
      owner_uuid: 'owner',
      grants: [],
      created_at: NOW,
      updated_at: NOW,
    });
    expect(() => decideCreateShareable(callerAs('viewer'), 'playbooks', { title: 'x' }, NOW, 'p')).toThrow(ForbiddenError);
    expect(decideView(admin, doc(), 'documents')).toEqual({ level: 'manage', source: 'admin' });
    expect(decideView(stranger, doc([grant('stranger', 'comment')]), 'documents')).toEqual({ level: 'comment', source: 'visible_entity' });
    expect(() => decideView(stranger, doc(), 'documents')).toThrow('POST /documents/d-1/access_requests');
  });

  it('grants: managers only; a new grant goes last, a changed one keeps its place; unchanged writes nothing', () => {
    const s = doc([grant('a', 'view'), grant('b', 'edit')]);
    const changed = decideGrant(owner, s, { user_uuid: 'a', level: 'edit' }, user('a'), LATER);
    expect(changed.unchanged).toBe(false);
    expect(changed.next.grants.map((g) => [g.user_uuid, g.level, g.granted_at])).toEqual([
      ['a', 'edit', LATER],
      ['b', 'edit', NOW],
    ]);
    expect(decideGrant(owner, s, { user_uuid: 'c', level: 'view' }, user('c'), LATER).next.grants.map((g) => g.user_uuid)).toEqual([
      'a',
      'b',
      'c',
    ]);
    expect(decideGrant(owner, s, { user_uuid: 'b', level: null }, user('b'), LATER).next.grants.map((g) => g.user_uuid)).toEqual(['a']);
    expect(decideGrant(owner, s, { user_uuid: 'b', level: 'edit' }, user('b'), LATER)).toEqual({ next: s, unchanged: true });
    expect(() => decideGrant(callerAs('member', 'b'), s, { user_uuid: 'a', level: 'view' }, user('a'), LATER)).toThrow(ForbiddenError);
    expect(
      codeOf(() => decideGrant(callerAs('member', 'm'), doc([grant('m', 'manage')]), { user_uuid: 'a', level: 'view' }, user('a'), LATER)),
    ).toBe('ok');
    expect(() =>
      decideGrant(callerAs('viewer', 'm'), doc([grant('m', 'manage')]), { user_uuid: 'a', level: 'view' }, user('a'), LATER),
    ).toThrow(ForbiddenError);
    expect(codeOf(() => decideGrant(owner, s, { user_uuid: 'ghost', level: 'view' }, undefined, LATER))).toBe('not_found');
    expect(codeOf(() => decideGrant(admin, s, { user_uuid: 'owner', level: 'view' }, user('owner'), LATER))).toBe('owner');
    const managers = doc(Array.from({ length: MAX_MANAGERS }, (_, i) => grant(`m${i}`, 'manage')));
    expect(codeOf(() => decideGrant(owner, managers, { user_uuid: 'one-more', level: 'manage' }, user('one-more'), LATER))).toBe(
      'too_many',
    );
  });

  it('a grant resolves the pending request it satisfies, nothing else', () => {
    expect(resolveByGrant(owner, request({ requested_level: 'edit' }), 'manage', LATER)).toMatchObject({
      status: 'resolved',
      resolved_at: LATER,
      resolved_by_uuid: 'owner',
    });
    expect(resolveByGrant(owner, request({ requested_level: 'edit' }), 'comment', LATER)).toBeUndefined();
    expect(resolveByGrant(owner, request(), null, LATER)).toBeUndefined();
    expect(resolveByGrant(owner, request({ status: 'resolved' }), 'manage', LATER)).toBeUndefined();
    expect(resolveByGrant(owner, undefined, 'view', LATER)).toBeUndefined();
    // the whole grant: nothing to write when neither the grant nor a request changes
    const s = doc([grant('stranger', 'view')]);
    expect(
      decideSetGrant(owner, s, { user_uuid: 'stranger', level: 'view' }, user('stranger'), request({ requested_level: 'edit' }), LATER),
    ).toEqual({ next: undefined, resolved: undefined });
    expect(
      decideSetGrant(owner, s, { user_uuid: 'stranger', level: 'view' }, user('stranger'), request({ requested_level: 'view' }), LATER),
    ).toMatchObject({ next: { updated_at: LATER }, resolved: { status: 'resolved' } });
    expect(decideSetGrant(owner, s, { user_uuid: 'stranger', level: 'edit' }, user('stranger'), undefined, LATER).next).toMatchObject({
      grants: [{ user_uuid: 'stranger', level: 'edit' }],
      updated_at: LATER,
    });
    expect(() => decideSetGrant(stranger, s, { user_uuid: 'a', level: 'view' }, user('a'), undefined, LATER)).toThrow(ForbiddenError);
  });
});

describe('access request decisions', () => {
  const s = doc([grant('m1', 'manage'), grant('v1', 'view')]);

  it('creates a pending request notifying the owner and managers; replaces a resolved one with a new request', () => {
    const d = decideRequestAccess(stranger, s, undefined, { requested_level: 'edit', message: '  please ' }, NOW, 'r-new');
    expect(d).toMatchObject({
      outcome: 'created',
      record: {
        uuid: 'r-new',
        status: 'pending',
        requested_level: 'edit',
        message: 'please',
        last_email_sent_at: NOW,
        notice: {
          kind: 'access_request.created',
          at: NOW,
          recipients: ['owner', 'm1'],
          actor_display_name: 'stranger',
          shareable_title: 'Plan',
        },
      },
    });
    expect(
      decideRequestAccess(stranger, s, request({ status: 'resolved' }), { requested_level: 'view', message: ' ' }, LATER, 'r-2'),
    ).toMatchObject({ outcome: 'created', record: { uuid: 'r-2', message: null } });
  });

  it('upgrades in place (the level only rises), updates the message, or changes nothing', () => {
    const pending = request({ requested_level: 'edit', message: 'hi' });
    expect(decideRequestAccess(stranger, s, pending, { requested_level: 'manage' }, LATER, 'x')).toMatchObject({
      outcome: 'upgraded',
      record: { uuid: 'r-1', requested_level: 'manage', message: 'hi', updated_at: LATER },
    });
    expect(decideRequestAccess(stranger, s, pending, { requested_level: 'view', message: 'new' }, LATER, 'x')).toMatchObject({
      outcome: 'updated',
      record: { requested_level: 'edit', message: 'new' },
    });
    expect(decideRequestAccess(stranger, s, pending, { requested_level: 'comment' }, LATER, 'x')).toEqual({
      outcome: 'unchanged',
      record: pending,
    });
  });

  it('is a no-op for what the caller already holds', () => {
    expect(decideRequestAccess(callerAs('member', 'v1'), s, undefined, { requested_level: 'view' }, NOW, 'x')).toEqual({
      outcome: 'already_satisfied',
      record: null,
    });
    expect(decideRequestAccess(admin, s, undefined, { requested_level: 'manage' }, NOW, 'x').outcome).toBe('already_satisfied');
  });

  it('resends once per window counted from the last e-mail', () => {
    const sentAt = Date.parse(NOW);
    expect(decideResend(stranger, s, undefined, sentAt)).toEqual({ status: 'no_pending_request', next_resend_at: null });
    expect(decideResend(stranger, s, request({ status: 'resolved' }), sentAt + RESEND_WINDOW_MS)).toMatchObject({
      status: 'no_pending_request',
    });
    expect(decideResend(stranger, s, request(), sentAt + RESEND_WINDOW_MS - 1)).toEqual({
      status: 'throttled',
      next_resend_at: new Date(sentAt + RESEND_WINDOW_MS).toISOString(),
    });
    const resent = decideResend(stranger, s, request(), sentAt + RESEND_WINDOW_MS);
    expect(resent).toMatchObject({
      status: 'resent',
      next_resend_at: new Date(sentAt + 2 * RESEND_WINDOW_MS).toISOString(),
      notice: { kind: 'access_request.resent', recipients: ['owner', 'm1'] },
    });
    expect(resent.status === 'resent' && resent.sent.last_email_sent_at).toBe(new Date(sentAt + RESEND_WINDOW_MS).toISOString());
  });
});
