import { describe, expect, it } from 'vitest';
import { decideCreateWebhook, decideUpdateWebhook } from '#shared/domain/webhooks/decide.ts';
import { MAX_WEBHOOKS_PER_TENANT, type WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import { callerAs, LATER, NOW, refusal } from './directory.fixture.ts';

const admin = callerAs('admin');
const ids = { uuid: 'w-1', secretSealed: 'sealed' };

describe('webhook commands (pure decide)', () => {
  it('creates for admins only, with the uuid and sealed secret given, events normalized', () => {
    const w = decideCreateWebhook(admin, { url: 'https://example.test/h', events: ['goal.created', 'goal.created', 'checkin.created'] }, 3, NOW, ids);
    expect(w).toMatchObject({ uuid: 'w-1', secret_sealed: 'sealed', events: ['goal.created', 'checkin.created'], description: null, status: 'active', creator_uuid: admin.userId, created_at: NOW, updated_at: NOW, failing_since: null });
    expect(decideCreateWebhook(admin, { url: 'https://example.test/h', events: ['goal.created', '*'] }, 0, NOW, ids).events).toEqual(['*']);
    for (const role of ['member', 'viewer'] as const) expect(refusal(() => decideCreateWebhook(callerAs(role), { url: 'https://x.test', events: ['*'] }, 0, NOW, ids)).status).toBe(403);
  });

  it('refuses the endpoint past the cap (422 too_many on url), and only there', () => {
    expect(() => decideCreateWebhook(admin, { url: 'https://x.test', events: ['*'] }, MAX_WEBHOOKS_PER_TENANT - 1, NOW, ids)).not.toThrow();
    const err = refusal(() => decideCreateWebhook(admin, { url: 'https://x.test', events: ['*'] }, MAX_WEBHOOKS_PER_TENANT, NOW, ids));
    expect(err).toMatchObject({ status: 422, details: [{ field: 'url', code: 'too_many' }] });
  });

  it('updates only what the body named; re-enabling or moving restarts the failure clock; an admin disable says so', () => {
    const failing: WebhookRecord = { ...decideCreateWebhook(admin, { url: 'https://a.test', events: ['*'], description: 'd' }, 0, NOW, ids), failing_since: NOW, status: 'disabled', disabled_reason: 'failing for 24 hours' };
    expect(decideUpdateWebhook(admin, failing, { description: null }, LATER)).toMatchObject({ description: null, status: 'disabled', failing_since: NOW, updated_at: LATER });
    expect(decideUpdateWebhook(admin, failing, {}, LATER)).toMatchObject({ description: 'd', url: 'https://a.test' });
    expect(decideUpdateWebhook(admin, failing, { status: 'active' }, LATER)).toMatchObject({ status: 'active', failing_since: null, disabled_reason: null });
    const active = { ...failing, status: 'active' as const, disabled_reason: null };
    expect(decideUpdateWebhook(admin, active, { url: 'https://b.test' }, LATER)).toMatchObject({ url: 'https://b.test', failing_since: null });
    expect(decideUpdateWebhook(admin, active, { events: ['goal.updated'] }, LATER)).toMatchObject({ failing_since: NOW, events: ['goal.updated'] });
    expect(decideUpdateWebhook(admin, active, { status: 'disabled' }, LATER)).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by an admin' });
    expect(refusal(() => decideUpdateWebhook(callerAs('member'), active, { status: 'disabled' }, LATER)).status).toBe(403);
  });
});
