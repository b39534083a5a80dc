import { describe, expect, it } from 'vitest';
import { decided } from '#shared/decision.ts';
import {
  CREATOR_LOST_ACCESS,
  decideCreateWebhook as decideCreate,
  decideCreatorCheck,
  decideHealth,
  decideUpdateWebhook as decideUpdate,
  holdsWebhookRights,
  losesWebhookRights,
  webhookAdminRefusal,
} from '#shared/domain/webhooks/decide.ts';

const decideCreateWebhook = (...args: Parameters<typeof decideCreate>) => decided(decideCreate(...args));
const decideUpdateWebhook = (...args: Parameters<typeof decideUpdate>) => decided(decideUpdate(...args));
import { MAX_WEBHOOKS_PER_TENANT, type WebhookRecord } from '#shared/domain/webhooks/entity.ts';
import { ENTITY_SK } from '#shared/db/keys.ts';
import { creatorLosingRights } from '#shared/stream/projections/webhook-creators.ts';
import type { TableChange } from '#shared/table-change.ts';
import { callerAs, LATER, NOW, refusal, TENANT, user } from './directory.fixture.ts';

const admin = callerAs('admin');
const ids = { uuid: 'w-1', secretSealed: 'sealed' };

describe('webhook commands (pure decide)', () => {
  it('creates for admins only, with the uuid and sealed secret given, events normalized', () => {
    const w = decideCreateWebhook(
      admin,
      { url: 'https://example.test/h', events: ['goal.created', 'goal.created', 'checkin.created'] },
      3,
      NOW,
      ids,
    );
    expect(w).toMatchObject({
      uuid: 'w-1',
      secret_sealed: 'sealed',
      events: ['goal.created', 'checkin.created'],
      description: null,
      status: 'active',
      creator_uuid: admin.userId,
      created_at: NOW,
      updated_at: NOW,
      failing_since: null,
    });
    expect(decideCreateWebhook(admin, { url: 'https://example.test/h', events: ['goal.created', '*'] }, 0, NOW, ids).events).toEqual(['*']);
    for (const role of ['member', 'viewer'] as const) expect(webhookAdminRefusal(callerAs(role))?.status).toBe(403); // every command's precheck
    expect(webhookAdminRefusal(admin)).toBeUndefined();
  });

  it('refuses the endpoint past the cap (422 too_many on url), and only there', () => {
    expect(() => decideCreateWebhook(admin, { url: 'https://x.test', events: ['*'] }, MAX_WEBHOOKS_PER_TENANT - 1, NOW, ids)).not.toThrow();
    const err = refusal(() => decideCreateWebhook(admin, { url: 'https://x.test', events: ['*'] }, MAX_WEBHOOKS_PER_TENANT, NOW, ids));
    expect(err).toMatchObject({ status: 422, details: [{ field: 'url', code: 'too_many' }] });
  });

  it('updates only what the body named; re-enabling or moving restarts the failure clock; an admin disable says so', () => {
    const failing: WebhookRecord = {
      ...decideCreateWebhook(admin, { url: 'https://a.test', events: ['*'], description: 'd' }, 0, NOW, ids),
      failing_since: NOW,
      status: 'disabled',
      disabled_reason: 'failing for 24 hours',
    };
    expect(decideUpdateWebhook(admin, failing, { description: null }, LATER)).toMatchObject({
      description: null,
      status: 'disabled',
      failing_since: NOW,
      updated_at: LATER,
    });
    expect(decideUpdateWebhook(admin, failing, {}, LATER)).toMatchObject({ description: 'd', url: 'https://a.test' });
    expect(decideUpdateWebhook(admin, failing, { status: 'active' }, LATER)).toMatchObject({
      status: 'active',
      failing_since: null,
      disabled_reason: null,
    });
    const active = { ...failing, status: 'active' as const, disabled_reason: null };
    expect(decideUpdateWebhook(admin, active, { url: 'https://b.test' }, LATER)).toMatchObject({
      url: 'https://b.test',
      failing_since: null,
    });
    expect(decideUpdateWebhook(admin, active, { events: ['goal.updated'] }, LATER)).toMatchObject({
      failing_since: NOW,
      events: ['goal.updated'],
    });
    expect(decideUpdateWebhook(admin, active, { status: 'disabled' }, LATER)).toMatchObject({
      status: 'disabled',
      disabled_reason: 'disabled by an admin',
    });
  });

  it('an endpoint sends only while its creator is an active admin; losing either disables it with the reason', () => {
    const creator = user(admin.userId, { role: 'admin' });
    const w = decideCreateWebhook(admin, { url: 'https://a.test', events: ['*'] }, 0, NOW, ids);
    expect(holdsWebhookRights(creator)).toBe(true);
    // a Decision like every decide: never a refusal, `write: undefined` when nothing changes
    expect(decideCreatorCheck(w, creator, LATER)).toEqual({ write: undefined });
    for (const lost of [
      { ...creator, role: 'member' as const },
      { ...creator, role: 'viewer' as const },
      { ...creator, status: 'inactive' as const },
      undefined,
    ]) {
      expect(holdsWebhookRights(lost)).toBe(false);
      expect(decideCreatorCheck(w, lost, LATER)).toEqual({
        write: { ...w, status: 'disabled', disabled_reason: CREATOR_LOST_ACCESS, updated_at: LATER },
      });
    }
    // Already disabled (by an admin, for failing, or for its creator before): nothing to write, no second notice.
    const off = { ...w, status: 'disabled' as const, disabled_reason: 'disabled by an admin' };
    expect(decideCreatorCheck(off, undefined, LATER)).toEqual({ write: undefined });
    expect(
      decideCreatorCheck({ ...w, status: 'disabled', disabled_reason: CREATOR_LOST_ACCESS }, { ...creator, role: 'member' }, LATER),
    ).toEqual({ write: undefined });
  });

  it('a demotion, deactivation or removal of an admin is a loss of webhook rights; any other user change is not', () => {
    const a = user('u-1', { role: 'admin' });
    expect(losesWebhookRights(a, { ...a, role: 'member' })).toBe(true);
    expect(losesWebhookRights(a, { ...a, status: 'inactive' })).toBe(true);
    expect(losesWebhookRights(a, undefined)).toBe(true);
    expect(losesWebhookRights(a, { ...a, display_name: 'Ada' })).toBe(false);
    expect(losesWebhookRights({ ...a, role: 'member' }, { ...a, role: 'viewer' })).toBe(false); // never held them
    expect(losesWebhookRights(undefined, a)).toBe(false);
    expect(losesWebhookRights({ ...a, role: 'member' }, a)).toBe(false); // a promotion
    // As the projection reads a change: the user item's record (`rec`), entity items only.
    const item = (rec: typeof a, v: number) => ({ kind: 'user', id: rec.uuid, v, rec });
    const change = (
      sk: string,
      eventName: TableChange['eventName'],
      oldImage?: Record<string, unknown>,
      newImage?: Record<string, unknown>,
    ): TableChange => ({
      eventId: 'e',
      eventName,
      at: NOW,
      tenantId: TENANT,
      keys: { PK: `T#${TENANT}#user#u-1`, SK: sk },
      oldImage,
      newImage,
    });
    expect(creatorLosingRights(change(ENTITY_SK, 'MODIFY', item(a, 1), item({ ...a, role: 'member' }, 2)))).toBe('u-1');
    expect(creatorLosingRights(change(ENTITY_SK, 'MODIFY', item(a, 1), item({ ...a, status: 'inactive' }, 2)))).toBe('u-1');
    expect(creatorLosingRights(change(ENTITY_SK, 'REMOVE', item(a, 1)))).toBe('u-1');
    expect(creatorLosingRights(change(ENTITY_SK, 'MODIFY', item(a, 1), item({ ...a, about: 'x' } as typeof a, 2)))).toBeUndefined();
    expect(creatorLosingRights(change(ENTITY_SK, 'INSERT', undefined, item({ ...a, role: 'member' }, 1)))).toBeUndefined();
    expect(creatorLosingRights(change('IX#manager#m', 'MODIFY', item(a, 1), item({ ...a, role: 'member' }, 2)))).toBeUndefined();
  });

  it('an admin turning a disabled endpoint on again becomes its creator; other updates keep the creator', () => {
    const other = callerAs('admin', 'admin-2');
    const w = decideCreateWebhook(admin, { url: 'https://a.test', events: ['*'] }, 0, NOW, ids);
    const lost: WebhookRecord = { ...w, status: 'disabled', disabled_reason: CREATOR_LOST_ACCESS };
    expect(decideUpdateWebhook(other, lost, { status: 'active' }, LATER)).toMatchObject({
      status: 'active',
      creator_uuid: 'admin-2',
      disabled_reason: null,
    });
    expect(decideUpdateWebhook(other, lost, { description: 'x' }, LATER)).toMatchObject({ status: 'disabled', creator_uuid: admin.userId });
    expect(decideUpdateWebhook(other, w, { status: 'active', url: 'https://b.test' }, LATER)).toMatchObject({ creator_uuid: admin.userId });
  });
  it("moves the endpoint's failure clock only when it flips, and disables an active endpoint failing for the whole window", () => {
    const w = decideCreateWebhook(admin, { url: 'https://a.test', events: ['*'] }, 0, NOW, ids);
    const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
    const HOUR = 3_600_000;
    // healthy: a success writes nothing, the first failure starts the clock
    expect(decided(decideHealth(w, true, at(0), HOUR))).toBeUndefined();
    expect(decided(decideHealth(w, false, at(0), HOUR))).toEqual({ endpoint: { ...w, failing_since: at(0) }, disabled: false });
    const failing = { ...w, failing_since: at(0) };
    // failing: a success stops it; a failure within the window writes nothing; at the window's end it disables
    expect(decided(decideHealth(failing, true, at(1), HOUR))).toEqual({ endpoint: { ...failing, failing_since: null }, disabled: false });
    expect(decided(decideHealth(failing, false, at(HOUR - 1), HOUR))).toBeUndefined();
    expect(decided(decideHealth(failing, false, at(HOUR), HOUR))).toEqual({
      endpoint: { ...failing, status: 'disabled', disabled_reason: `every delivery failed since ${at(0)}`, updated_at: at(HOUR) },
      disabled: true,
    });
    // disabled already: nothing more
    expect(decided(decideHealth({ ...failing, status: 'disabled' }, false, at(2 * HOUR), HOUR))).toBeUndefined();
  });
});
