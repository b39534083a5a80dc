import { scopedUuidOf } from '#shared/domain/scoped-id.ts';
import { NotFoundError } from '#shared/errors.ts';

/**
 * Shareable resources (contract section 8): the four path values, the singular `type` each answers with,
 * and the ordered access levels `view < comment < edit < manage`.
 */
export const SHAREABLE_TYPE_BY_PATH = {
  'okrs-dashboards': 'okrs_dashboard',
  documents: 'document',
  'explorer-views': 'explorer_view',
  playbooks: 'playbook',
} as const;

export type ShareablePath = keyof typeof SHAREABLE_TYPE_BY_PATH;
export type ShareableType = (typeof SHAREABLE_TYPE_BY_PATH)[ShareablePath];
export const SHAREABLE_PATHS = Object.keys(SHAREABLE_TYPE_BY_PATH) as ShareablePath[];
export const SHAREABLE_TYPES = Object.values(SHAREABLE_TYPE_BY_PATH) as ShareableType[];
export const PATH_BY_SHAREABLE_TYPE = Object.fromEntries(Object.entries(SHAREABLE_TYPE_BY_PATH).map(([p, t]) => [t, p])) as Record<
  ShareableType,
  ShareablePath
>;

export const LEVELS = ['view', 'comment', 'edit', 'manage'] as const;
export type Level = (typeof LEVELS)[number];

export const levelRank = (l: Level): number => LEVELS.indexOf(l);
/** Whether holding `have` (null: no access) satisfies `want`. */
export const satisfies = (have: Level | null, want: Level): boolean => have !== null && levelRank(have) >= levelRank(want);
export const higherLevel = (a: Level, b: Level): Level => (levelRank(a) >= levelRank(b) ? a : b);

/** A type in words, for messages: `okrs_dashboard` → `okrs dashboard`. */
export const shareableName = (type: ShareableType) => type.replace('_', ' ');

/** No shareable of `path`'s type named `shareableUuid` in the caller's tenant (contract section 1: 404). */
export const shareableNotFound = (path: ShareablePath, shareableUuid: string) =>
  new NotFoundError(shareableName(SHAREABLE_TYPE_BY_PATH[path]), shareableUuid);

/**
 * The shareable path a request is for, from its route key (`POST /documents/{shareable_uuid}/grants` →
 * `documents`). Each type has its own route rows (so API Gateway answers 404 for any other value, as it
 * does for every unknown path), and the rows share one handler file per operation.
 */
export function shareablePathOfRoute(routeKey: string): ShareablePath {
  const segment = routeKey.split(' ')[1]?.split('/')[1] ?? '';
  if (!(segment in SHAREABLE_TYPE_BY_PATH)) throw new Error(`Route ${routeKey} is not a shareable route`);
  return segment as ShareablePath;
}

/**
 * The resource uuid named by a `shareable_uuid` path value: `<tenant_uuid>_<resource_uuid>` or the bare
 * resource uuid. A prefix naming another tenant, or anything that is not a uuid, names no resource of the
 * caller's tenant: 404 (contract section 1), never a hint that the resource exists elsewhere.
 */
export function resourceUuidOf(tenantId: string, shareableUuid: string, path: ShareablePath): string {
  return scopedUuidOf(tenantId, shareableUuid, () => shareableNotFound(path, shareableUuid));
}
