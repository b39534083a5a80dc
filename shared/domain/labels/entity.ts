import type { BaseRecord, EntityDef } from '#shared/db/store.ts';
import { TakenError } from '#shared/errors.ts';

export interface LabelRecord extends BaseRecord {
  name: string;
  is_group: boolean;
  /** A regular label may sit under a label group. */
  parent_uuid: string | null;
  color: string | null;
  creator_uuid: string | null;
}

/** Label names are unique per tenant ignoring case and surrounding/collapsed whitespace. */
export const normalizeLabelName = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();

export const labelEntity: EntityDef<LabelRecord> = {
  type: 'label',
  entries: (l) => (l.parent_uuid ? [{ name: 'parent', value: l.parent_uuid }] : []),
  uniques: (l) => [{ name: 'label_name', value: normalizeLabelName(l.name), onTaken: () => new TakenError('name', `A label named ${l.name} already exists`) }],
};
