import { parseImportRow } from '#shared/schemas/imports.ts';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { callerTeamUuids } from '#shared/auth/load-caller.ts';
import type { Db } from '#shared/db/client.ts';
import { keys } from '#shared/db/keys.ts';
import { partitionEntries } from '#shared/db/index-queries.ts';
import type { DataCtx } from '#shared/db/data-ctx.ts';
import { getEntities, getEntity } from '#shared/db/reads.ts';
import type { DomainCtx } from '#shared/domain/context.ts';
import type { ImportRecord } from '#shared/domain/imports/entity.ts';
import { importFileRows } from '#shared/domain/imports/parse.ts';
import { startImport } from '#shared/domain/imports/service.ts';
import { presentImportInFull } from '#shared/presenters/imports.ts';
import { runImport } from '#shared/domain/imports/worker.ts';
import { userEntity, type UserRecord } from '#shared/domain/users/entity.ts';
import { UUID_RE } from '#shared/ids.ts';
import { Loader } from '#shared/list/entity-cache.ts';
import type { Log } from '#shared/logger.ts';

/**
 * `npm run admin -- import FILE --tenant T [--user U]`: the same import as POST /rest/v2/imports (same
 * parsing, validation, write rules, all or nothing), run here instead of by the queue worker, with a
 * progress bar on stderr. FILE is CSV (`.csv`) or JSON `{ goals: [...] }`. The goals are created as user U
 * (default: the tenant's first active admin). Prints the finished import as one JSON line; exits 1 when
 * it failed.
 */
export async function runImportCommand(args: string[], db: Db): Promise<Record<string, unknown>> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { tenant: { type: 'string' }, user: { type: 'string' } },
  });
  const file = positionals[0];
  if (!file) throw new Error('Usage: import FILE --tenant <tenant_uuid> [--user <user_uuid>]');
  if (!values.tenant || !UUID_RE.test(values.tenant)) throw new Error('--tenant <tenant_uuid> is required');
  if (values.user !== undefined && !UUID_RE.test(values.user)) throw new Error('--user must be a user uuid');
  const data: DataCtx = { tenantId: values.tenant.toLowerCase(), db };
  const user = values.user ? (await getEntity(data, userEntity, values.user.toLowerCase()))?.record : await firstAdmin(data);
  if (!user)
    throw new Error(values.user ? `No user ${values.user} in tenant ${values.tenant}` : `No active admin in tenant ${values.tenant}`);
  if (user.status !== 'active') throw new Error(`User ${user.uuid} is not active`);
  const rows = await importFileRows(readFileSync(file, 'utf8'), file.toLowerCase().endsWith('.csv'));

  const quiet = { info() {}, warn() {}, error: (m: unknown, ...extra: unknown[]) => console.error(m, ...extra) } as unknown as Log;
  let teams: Promise<Set<string>> | undefined;
  const ctx: DomainCtx = {
    ...data,
    caller: { tenantId: data.tenantId, userId: user.uuid, role: user.role, user },
    loader: new Loader(data),
    log: quiet,
    requestId: 'admin-import',
    teams: () => (teams ??= callerTeamUuids(data, user.uuid)),
  };
  const started = Date.now();
  const bar = progressBar(rows.length);
  // Stored as the API stores it, but not queued: this process is the worker.
  const record = await startImport(ctx, rows, { send: async () => 'admin-import' });
  bar({ ...record, state: 'validating' });
  const finished = await runImport(data, record.uuid, { log: quiet, lastAttempt: true, onProgress: bar, parseRow: parseImportRow });
  bar(finished);
  process.stderr.write('\n');
  const out = { ...(await presentImportInFull(data, finished)), seconds: Math.round((Date.now() - started) / 100) / 10 };
  if (finished.state !== 'succeeded') {
    process.exitCode = 1;
    return { ...out, created: null };
  }
  return { ...out, created: Object.keys(out.created ?? {}).length };
}

async function firstAdmin(data: DataCtx): Promise<UserRecord | undefined> {
  let batch: string[] = [];
  const pick = async () =>
    [...(await getEntities(data, userEntity, batch)).values()]
      .map((s) => s.record)
      .find((u) => u.role === 'admin' && u.status === 'active');
  for await (const e of partitionEntries(data, keys.entityList(data.tenantId, userEntity.type))) {
    batch.push(e.id);
    if (batch.length === 100) {
      const found = await pick();
      if (found) return found;
      batch = [];
    }
  }
  return batch.length ? pick() : undefined;
}

/** `[██████░░░░] 6000/10000 importing 12s` on a terminal (one line, redrawn); a line per 10% otherwise. */
function progressBar(total: number) {
  const started = Date.now();
  let lastTenth = -1;
  return (r: Pick<ImportRecord, 'state' | 'done'>) => {
    const width = 30;
    const filled = Math.round((r.done / Math.max(1, total)) * width);
    const line = `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${r.done}/${total} ${r.state} ${Math.round((Date.now() - started) / 1000)}s`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
    else {
      const tenth = Math.floor((r.done / Math.max(1, total)) * 10);
      if (tenth !== lastTenth || r.state === 'succeeded' || r.state === 'failed') process.stderr.write(`${line}\n`);
      lastTenth = tenth;
    }
  };
}
