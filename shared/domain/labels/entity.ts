import { entryList } from '#shared/db/entry-lists.ts';
import { entry, type BaseRecord, type Claim, type EntityDef } from '#shared/db/model.ts';
import { newId } from '#shared/ids.ts';
import { TakenError } from '#shared/errors.ts';

export interface LabelRecord extends BaseRecord {
  name: string;
  is_group: boolean;
  /** A regular label may sit under a label group. */
  parent_uuid: string | null;
  color: string | null;
  creator_uuid: string | null;
}

/**
 * A label as a goal or check-in names it: `{ uuid, name }`, the record's `labels` field as presented. Goals and
 * check-ins keep these beside `label_uuids` (written by the command from the labels it read or created, kept
 * right by the change stream's `label-names` projection when a label is renamed or deleted).
 */
export interface LabelRef {
  uuid: string;
  name: string;
}

/** Longest label name; the request schema and labelsForNames (goal/check-in `labels`) share it. */
export const LABEL_NAME_MAX = 100;

/** Label names are unique per tenant ignoring case and surrounding/collapsed whitespace. */
export const normalizeLabelName = (name: string) => name.trim().replace(/\s+/g, ' ').toLowerCase();

/** The labels of a label group (`label@parent#<group>`). */
export const labelsInGroup = entryList('label', 'parent');

export const labelEntity: EntityDef<LabelRecord> = {
  type: 'label',
  entries: (l) => (l.parent_uuid ? [entry(labelsInGroup, l.parent_uuid)] : []),
  // the claim carries the name as spelled, so a command naming labels reads the claims only (not the labels)
  uniques: (l) => [
    {
      name: 'label_name',
      value: normalizeLabelName(l.name),
      data: { name: l.name },
      onTaken: () => new TakenError('name', `A label named ${l.name} already exists`),
    },
  ],
};

/**
 * A label name claim as read: the label's uuid and, when the claim carries it, its name as spelled (claims
 * written before they carried it have none until the label is next renamed; the label is read then).
 */
export interface ClaimedLabel {
  uuid: string;
  name?: string;
}

export function claimedLabels(claims: ReadonlyMap<string, Claim>): Map<string, ClaimedLabel> {
  return new Map([...claims].map(([key, c]) => [key, { uuid: c.id, ...(typeof c.data?.name === 'string' ? { name: c.data.name } : {}) }]));
}

/** Labels whose claim carries no name: the ones a command must still read. */
export const labelsToRead = (claims: ReadonlyMap<string, ClaimedLabel>): string[] =>
  [...claims.values()].filter((c) => c.name === undefined).map((c) => c.uuid);

/** A label record with every field set (null when unset); a regular label unless `is_group`. */
export function newLabelRecord(
  input: { name: string; is_group?: boolean; parent_uuid?: string | null; color?: string | null; creator_uuid: string | null },
  now: string,
  uuid: string = newId(),
): LabelRecord {
  return {
    uuid,
    name: input.name.trim(),
    is_group: input.is_group ?? false,
    parent_uuid: input.parent_uuid ?? null,
    color: input.color ?? null,
    creator_uuid: input.creator_uuid,
    created_at: now,
    updated_at: now,
  };
}

/** Labels a write named (some created by it): the request's loader holds them, so its response names them without reading them back. */
export function primeLabels(loader: { prime(def: typeof labelEntity, r: LabelRecord): void }, labels: LabelRecord[]): void {
  for (const l of labels) loader.prime(labelEntity, l);
}
