/**
 * Every key of the table is built here and nowhere else. Every partition key (base table and GSI) starts
 * with `T#<tenant>#`, so an IAM session policy on `dynamodb:LeadingKeys` = `T#<tenant>#*` confines a
 * credential to one tenant (see tenant-scope.ts).
 *
 * Item families:
 *  - entity:  PK = T#t#<type>#<id>            SK = #              GSI1PK = T#t#<list>              GSI1SK = <created_at>#<id>
 *  - entry:   PK = T#t#<type>#<id>            SK = IX#[<list>@]<name>#<v>GSI1PK = T#t#<list>@<name>#<v>   GSI1SK = <created_at>#<id>
 *             (<list> is the type, except goals, whose list is their kind)
 *             (one per association value: goal owner, label, team...; lists "<type>s whose <name> is <v>")
 *  - reference entry (an entry whose list declares `heldBy`, e.g. a goal's team and time period entries, or
 *             `keptBy`, a goal's `child_of` entries, kept in the parent's partition):
 *             PK = T#t#<heldBy>#<value>        SK = RF#<list>@<name>#<id> GSI1 as an entry
 *             (kept in the referenced entity's partition, so its delete finds every referrer with one
 *             strongly consistent Query: see references.ts removeUnreferenced and docs/data-model.md)
 *  - unique:  PK = T#t#unique#<name>#<value>  SK = #              (uniqueness claim: user email, label name, short_id)
 *  - misc:    PK = T#t#<kind>#<id>            SK = <anything>     (counters, throttles, per-entity side items)
 *  - read-model entry (kept by the change stream, shared/stream/projections/goal-read-models.ts):
 *             PK = T#t#goal#<id>              SK = RM#<name>[#<value>]   GSI1 as an entry (a composite list)
 *  - read-model counter shard: PK = T#t#goalcount#<kind>#<dimension>#<shard>  SK = #
 *  - page anchor (a kind's goals per creation-time bucket): PK = T#t#goalanchor#<kind>  SK = <bucket>#<shard>
 *  - read-model state (built for the tenant?): PK = T#t#read_models#goals  SK = #
 *  - event feed (shared/domain/events/feed.ts), all kept 30 days by TTL:
 *             event:  PK = T#t#events#<hour>           SK = <recorded at>#<stream sequence>#<n>
 *             hour:   PK = T#t#eventhours              SK = <hour>          (the hours that hold events)
 *             pointer: PK = T#t#eventid#<event id>     SK = #               (where an event is, for `after=<id>`)
 *  - webhook directory: PK = T#t#webhooks  SK = <endpoint uuid>  (the endpoints, for the fan-out's strong read)
 */
export const ENTITY_SK = '#';
export const ENTRY_SK_PREFIX = 'IX#';
export const REFERENCE_SK_PREFIX = 'RF#';

const tenantPrefix = (tenantId: string) => `T#${tenantId}#`;
const goalAnchorPartition = (tenantId: string, kind: string) => `${tenantPrefix(tenantId)}goalanchor#${kind}`;

export const keys = {
  tenantPrefix,
  /** The `dynamodb:LeadingKeys` pattern that confines a credential to one tenant. */
  leadingKeysPattern: (tenantId: string) => `${tenantPrefix(tenantId)}*`,

  entity: (tenantId: string, type: string, id: string) => ({ PK: `${tenantPrefix(tenantId)}${type}#${id}`, SK: ENTITY_SK }),
  entityList: (tenantId: string, type: string) => `${tenantPrefix(tenantId)}${type}`,

  entry: (tenantId: string, type: string, id: string, name: string, value: string) => ({
    PK: `${tenantPrefix(tenantId)}${type}#${id}`,
    SK: `${ENTRY_SK_PREFIX}${name}#${value}`,
  }),
  entryList: (tenantId: string, type: string, name: string, value: string) => `${tenantPrefix(tenantId)}${type}@${name}#${value}`,

  reference: (tenantId: string, heldBy: string, heldById: string, list: string, name: string, id: string) => ({
    PK: `${tenantPrefix(tenantId)}${heldBy}#${heldById}`,
    SK: `${REFERENCE_SK_PREFIX}${list}@${name}#${id}`,
  }),

  listSortKey: (createdAt: string, id: string) => `${createdAt}#${id}`,

  unique: (tenantId: string, name: string, value: string) => ({ PK: `${tenantPrefix(tenantId)}unique#${name}#${value}`, SK: ENTITY_SK }),

  misc: (tenantId: string, kind: string, id: string, sk = ENTITY_SK) => ({ PK: `${tenantPrefix(tenantId)}${kind}#${id}`, SK: sk }),

  /** A read-model entry of an entity, in the entity's own partition (`RM#<name>`), indexed on GSI1 like an entry. */
  readModelEntry: (tenantId: string, type: string, id: string, name: string) => ({
    PK: `${tenantPrefix(tenantId)}${type}#${id}`,
    SK: `${READ_MODEL_SK_PREFIX}${name}`,
  }),
  /** One shard of an exact counter of a goal kind's list along one dimension (`all`, `status:on_track`, `owner:<u>|status:<s>`, ...). */
  goalCounter: (tenantId: string, kind: string, dimension: string, shard: number) => ({
    PK: `${tenantPrefix(tenantId)}goalcount#${kind}#${dimension}#${shard}`,
    SK: ENTITY_SK,
  }),
  /** One shard of the page anchor of a goal kind's list: its goals created within one bucket of time (a tenth of a second). */
  goalAnchor: (tenantId: string, kind: string, bucket: string, shard: number) => ({
    PK: goalAnchorPartition(tenantId, kind),
    SK: `${bucket}#${shard}`,
  }),
  goalAnchorPartition: (tenantId: string, kind: string) => goalAnchorPartition(tenantId, kind),
  /** Whether every goal of a tenant keeps its `child_of` entries in its parents' partitions (new tenants, or after the backfill). */
  childRefsState: (tenantId: string) => ({ PK: `${tenantPrefix(tenantId)}goal_layout#child_refs`, SK: ENTITY_SK }),
  /** Whether every check-in of a tenant names the current list shards (new tenants, or after the reshard command). */
  checkinListsState: (tenantId: string) => ({ PK: `${tenantPrefix(tenantId)}checkin_layout#list_shards`, SK: ENTITY_SK }),
  /** Whether a tenant's goal read models are complete (written when the tenant is created, or by the backfill). */
  readModelState: (tenantId: string) => ({ PK: `${tenantPrefix(tenantId)}read_models#goals`, SK: ENTITY_SK }),
  /** The event feed's partition of one hour (`YYYY-MM-DDTHH`): a tenant's events spread over hours, no partition takes them all. */
  eventFeedHour: (tenantId: string, hour: string) => `${tenantPrefix(tenantId)}events#${hour}`,
  /** The directory of the hours that hold a tenant's events: a reader skips empty hours without querying them. */
  eventFeedHours: (tenantId: string) => `${tenantPrefix(tenantId)}eventhours`,
  eventFeedHourEntry: (tenantId: string, hour: string) => ({ PK: `${tenantPrefix(tenantId)}eventhours`, SK: hour }),
  /** Where the feed holds an event (its hour and sort key), by the event's id. */
  eventPointer: (tenantId: string, eventId: string) => ({ PK: `${tenantPrefix(tenantId)}eventid#${eventId}`, SK: ENTITY_SK }),
  /** The directory of a tenant's webhook endpoints: one strongly consistent Query lists every endpoint committed. */
  webhookDirectory: (tenantId: string) => `${tenantPrefix(tenantId)}webhooks`,
  webhookDirectoryEntry: (tenantId: string, webhookUuid: string) => ({ PK: `${tenantPrefix(tenantId)}webhooks`, SK: webhookUuid }),
};

export const READ_MODEL_SK_PREFIX = 'RM#';
