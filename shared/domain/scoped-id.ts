import type { AppError } from '#shared/errors.ts';
import { UUID_RE } from '#shared/ids.ts';

/**
 * An application-endpoint id is `<tenant_uuid>_<uuid>` or the bare uuid (spec: shareables, data sources).
 * Returns the uuid, lower-cased; a prefix naming another tenant, or anything that is not a uuid, is `notFound`
 * (never a hint that the id exists elsewhere).
 */
export function scopedUuidOf(tenantId: string, value: string, notFound: () => AppError): string {
  const cut = value.lastIndexOf('_');
  const tenantPart = cut >= 0 ? value.slice(0, cut) : undefined;
  const uuid = cut >= 0 ? value.slice(cut + 1) : value;
  if ((tenantPart !== undefined && tenantPart.toLowerCase() !== tenantId.toLowerCase()) || !UUID_RE.test(uuid)) throw notFound();
  return uuid.toLowerCase();
}
