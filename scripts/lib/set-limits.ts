import { parseArgs } from 'node:util';
import { config } from '#shared/config.ts';
import type { Db } from '#shared/db/client.ts';
import { deleteTenantLimits, readTenantLimits, writeTenantLimits, type TenantLimits } from '#shared/db/rate-limit-store.ts';
import { UUID_RE } from '#shared/ids.ts';
import { getTenant } from '#shared/domain/tenants.ts';
import { effectiveLimits, limitDefaultsFromEnv } from '#shared/http/rate-limit.ts';

/** A non-negative number of requests (per second or burst), at most one million. */
function parseRate(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1_000_000) throw new Error(`--${name} must be a number from 0 to 1000000`);
  return n;
}

/**
 * `set-limits --tenant <uuid> --rps <n> [--burst <n>] [--user-rps <n>] [--user-burst <n>]`: the tenant's own
 * limits (rps 0: unlimited); user limits default to half the tenant's. `--reset` returns to the service
 * defaults. Containers pick a change up within 10 seconds. Prints the limits now in force.
 */
export async function setLimits(db: Db, args: string[]): Promise<Record<string, unknown>> {
  const { values } = parseArgs({
    args,
    options: {
      tenant: { type: 'string' },
      rps: { type: 'string' },
      burst: { type: 'string' },
      'user-rps': { type: 'string' },
      'user-burst': { type: 'string' },
      reset: { type: 'boolean' },
    },
  });
  if (!values.tenant || !UUID_RE.test(values.tenant)) throw new Error('--tenant <tenant_uuid> is required');
  const tenantId = values.tenant.toLowerCase();
  const table = config.tableName;
  if (!(await getTenant({ tenantId, db }))) throw new Error(`No tenant ${tenantId}`);
  if (values.reset) {
    await deleteTenantLimits(db, table, tenantId);
  } else {
    const limits: TenantLimits = {
      rps: parseRate('rps', values.rps),
      burst: parseRate('burst', values.burst),
      user_rps: parseRate('user-rps', values['user-rps']),
      user_burst: parseRate('user-burst', values['user-burst']),
    };
    if (limits.rps === undefined) throw new Error('--rps <requests per second> is required (0: unlimited), or --reset');
    if ((limits.burst !== undefined && limits.burst < 1) || (limits.user_burst !== undefined && limits.user_burst < 1))
      throw new Error('--burst and --user-burst must be at least 1');
    await writeTenantLimits(db, table, tenantId, Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)));
  }
  const { tenant, user } = effectiveLimits(limitDefaultsFromEnv(), await readTenantLimits(db, table, tenantId));
  return { tenant_uuid: tenantId, tenant: tenant ?? null, user: user ?? null };
}
