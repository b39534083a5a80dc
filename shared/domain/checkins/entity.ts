import { keys } from '#shared/db/keys.ts';
import { entryList } from '#shared/db/entry-lists.ts';
import { entry, type BaseRecord, type EntityDef } from '#shared/db/model.ts';
import type { GoalKind, GoalStatus } from '#shared/domain/goals/entity.ts';
import type { LabelRef } from '#shared/domain/labels/entity.ts';

/** Where a check-in came from: the REST API, an AI assistant's MCP tool call, an import, a data source's sync or push. */
export const CHECKIN_SOURCES = ['api', 'mcp', 'import', 'data_source'] as const;
export type CheckinSource = (typeof CHECKIN_SOURCES)[number];

export interface CheckinRecord extends BaseRecord {
  goal_uuid: string;
  /** Kind of the goal checked in on (`checkinable_type` filter). */
  goal_type: GoalKind;
  metric_uuid: string | null;
  value: number | null;
  progress: number | null;
  score: number | null;
  checkin_date: string;
  status: GoalStatus;
  note: string | null;
  creator_uuid: string;
  /** Who wrote the check-in last (creator, or the last updater): the goal's value/status_updated_by_uuid. Not presented. */
  updated_by_uuid: string;
  source_type: string | null;
  source_info: Record<string, unknown>;
  /** Absent on check-ins written before it was kept: those came from the API. */
  source?: CheckinSource;
  data_source_uuid?: string | null;
  mentioned_entities: Record<string, unknown> | unknown[];
  label_uuids: string[];
  /**
   * The labels named, `label_uuids` in order, as presented: written by the command, kept right by the change
   * stream (`label-names` projection) when a label is renamed or deleted. Absent on check-ins written before it
   * was kept: those are presented by reading the labels.
   */
  labels?: LabelRef[];
  /**
   * How many list shards its list names were computed with (checkinListName): absent on check-ins written before
   * the list went from 16 shards to 2, whose entries are still in the old ones; the next write moves them.
   */
  list_shards?: number;
}

/**
 * The tenant-wide check-in list is written on every check-in, the busiest write of a large tenant (integrations
 * check in by machine), so it is split into CHECKIN_LIST_SHARDS GSI1 partitions by goal (the goal uuid's last hex
 * digit); lists merge them back in creation order. Two, because every shard costs a list page: each first Query
 * reads at least 0.5 RCU, and page 1 (20 check-ins at 0.5 RCU, the caller at 1) has 12 RCU in all (issue 20), so
 * 2 shards (1 RCU) fit where 16 (8 RCU) did not. Two still take 2,000 check-ins/s a tenant (1,000 WCU/s a GSI
 * partition), 40 times the default tenant rate limit (50 rps), which every check-in passes first.
 */
export const CHECKIN_LIST_SHARDS = 2;
/** The shards before (`checkin#0` … `#15`): still read for a tenant not yet resharded (list-shards.ts). */
export const LEGACY_CHECKIN_LIST_SHARDS = 16;
export const checkinListName = (goalUuid: string, shards: number = CHECKIN_LIST_SHARDS) =>
  `checkin#${parseInt(goalUuid.slice(-1), 16) % shards || 0}`;
const listNames = (shards: number) => Array.from({ length: shards }, (_, i) => `checkin#${i}`);
export const CHECKIN_LISTS = listNames(CHECKIN_LIST_SHARDS);
/** Every name the list had: the old 16, which include the 2 current ones (a check-in written since is in one of them). */
export const LEGACY_CHECKIN_LISTS = listNames(LEGACY_CHECKIN_LIST_SHARDS);
/** A check-in's list name as stored: under the shard count it was written with. */
const listOf = (c: CheckinRecord) => checkinListName(c.goal_uuid, c.list_shards ?? LEGACY_CHECKIN_LIST_SHARDS);

/** The check-ins of a goal (`checkin@goal#<goal>`): one goal's check-ins stay in one entry list, whatever the shard. */
export const checkinsOfGoal = entryList('checkin', 'goal');

/**
 * The check-ins naming a label, in the check-in's list shard (`checkin#<n>@label#<label>`): read only by the
 * change stream, to bring a renamed or deleted label's name up to date on the check-ins that show it. Sharded
 * like the check-in list (and moved with it), so a label every machine check-in carries spreads its writes.
 * Declared only for check-ins that keep names (`labels`): one written before has no such entries in the table,
 * and the store writes them (its entries diffed) with the write that first gives it names.
 */
export const checkinsByLabel = (shardList: string) => entryList(shardList, 'label');

export const checkinEntity: EntityDef<CheckinRecord> = {
  type: 'checkin',
  listName: listOf,
  entries: (c) => [
    entry(checkinsOfGoal, c.goal_uuid),
    ...(c.labels === undefined ? [] : [...new Set(c.label_uuids)].map((l) => entry(checkinsByLabel(listOf(c)), l))),
  ],
  // every write names the current shards: a check-in written before moves its list and label entries (WriteTx.replace)
  layout: (c) => (c.list_shards === CHECKIN_LIST_SHARDS ? c : { ...c, list_shards: CHECKIN_LIST_SHARDS }),
};

/**
 * The order in which check-ins of one goal follow each other: latest `checkin_date`, then latest creation
 * (uuid breaks a tie of the same millisecond). Fixed for a check-in's life (neither field is updatable).
 */
export const checkinOrderKey = (c: Pick<CheckinRecord, 'checkin_date' | 'created_at' | 'uuid'>) =>
  `${c.checkin_date}#${c.created_at}#${c.uuid}`;

/**
 * Per-goal order items: one per check-in, in the goal's own base-table partition
 * `T#<t>#checkin_order#<goal>` with SK = checkinOrderKey. Unlike the GSI1 list (eventually consistent and in
 * creation order), a strongly consistent Query of this partition, newest first, names the goal's latest
 * check-in exactly, which is what the goal must follow. Written and deleted in the check-in's transaction.
 */
export const checkinOrderItemKey = (tenantId: string, goalUuid: string, orderKey: string) =>
  keys.misc(tenantId, 'checkin_order', goalUuid, orderKey);
