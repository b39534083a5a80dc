import { Aws, RemovalPolicy, Stack, Duration } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { TABLE_DEFINITION } from '#shared/db/table.ts';
import { ITEM_WRITE_ACTIONS, OPERATOR_ONLY_LEADING_KEYS, TABLE_DATA_ACTIONS } from '#shared/db/table-access.ts';
import { TENANT_TAG, TENANT_TAG_LEADING_KEYS, TENANT_TAG_SHAPE, TENANT_TAG_VARIABLE } from '#shared/db/tenant-scope.ts';
import { LIMITER_ACTIONS, limiterLeaseLeadingKeys } from '#shared/db/rate-limit-store.ts';

export type TableAccess = 'read' | 'write';

/**
 * Data actions per access level, from shared/db/table-access.ts. The role grants them on the tagged tenant's
 * leading keys only; the session policy (a second layer) allows the write list on the same tenant's keys, so
 * the effective permission of a tenant session is exactly the role's list on its tenant's items.
 */
export const TABLE_ACTIONS: Record<TableAccess, readonly string[]> = TABLE_DATA_ACTIONS;

/** What a function must expose to be bound to the table: its execution role and its environment. */
export interface TableBindable {
  readonly role: iam.IRole;
  readonly rolePath: string;
  addEnvironment(key: string, value: string): void;
}

/** One table-wide grant to an execution role, with why it cannot go through a tenant session. */
export interface TableWideGrant {
  principal: string;
  access: TableAccess;
  justification: string;
}

/**
 * The single table, built from TABLE_DEFINITION (the same object DynamoDB Local is created from), and the
 * two tenant data roles functions reach it through.
 *
 * Functions never hold table data actions themselves. A function assumes the read or write tenant role with a
 * `tenant` session tag naming its caller's tenant, and the role's own policy allows items only where
 * dynamodb:LeadingKeys matches `T#${aws:PrincipalTag/tenant}#*`: whatever key a handler builds, and whatever
 * session policy it passes (or none), it cannot touch another tenant's partition. The trust policy refuses an
 * assumption without a well-formed tag (sts:AssumeRole and sts:TagSession both require it), so no session of
 * these roles is untagged. The roles carry no `tenant` tag of their own: a role tag would stand in for a
 * missing session tag. tenant-scope.ts still passes a per-tenant session policy, as a second layer. Two roles
 * instead of one: the intersection with the read role's policy is what keeps a `table: read` function read-only.
 * Neither role may change the operator-set items inside a tenant's prefix (the rate limits, rl#config): the read
 * role is granted no write of them, the write role is denied it explicitly (`OperatorOnlyItems`).
 *
 * What the tag does not contain: the function picks the tag when it assumes the role, and its execution role may
 * assume with any tenant's (the trust policy checks the tag's shape, not its tenant), so code running in the
 * function with its credentials (a compromised dependency) can take any tenant's session at the function's level
 * (docs/deploy.md, "Tenant isolation").
 *
 * The trust policy cannot list every function role (a trust policy is at most 2,048 characters, 4,096 after a
 * quota raise, and the route table grows), so it trusts role *paths*: only execution roles this stack creates
 * under `/goal-tracking/<stack>/tenant-read/` (or `tenant-write/`) may assume the matching role, and since the
 * principal is the account, each of them also needs sts:AssumeRole and sts:TagSession in its own policy (see
 * `bindTable`).
 */
export class TenantData extends Construct {
  readonly table: Table;
  readonly readRole: iam.Role;
  readonly writeRole: iam.Role;
  /** Every table-wide grant made through `grantTableWide`, for the deploy guide and the tests. */
  readonly tableWideGrants: TableWideGrant[] = [];
  private readonly pathPrefix: string;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const d = TABLE_DEFINITION;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: d.partitionKey, type: AttributeType.STRING },
      sortKey: { name: d.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection: true,
      // Tenant data outlives the stack: deleting or replacing the stack must never drop the table.
      removalPolicy: RemovalPolicy.RETAIN,
      timeToLiveAttribute: d.ttlAttribute,
      stream: StreamViewType[d.stream.viewType],
    });
    for (const g of d.globalSecondaryIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: g.indexName,
        partitionKey: { name: g.partitionKey, type: AttributeType.STRING },
        sortKey: { name: g.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.INCLUDE,
        nonKeyAttributes: [...g.nonKeyAttributes],
      });
    }

    this.pathPrefix = `/goal-tracking/${Stack.of(this).stackName}/`;
    this.readRole = this.tenantRole('TenantReadRole', 'read');
    this.writeRole = this.tenantRole('TenantWriteRole', 'write');
  }

  /** The table and each index by name: no `index/*` wildcard, so a new index is granted only when it is defined. */
  get dataResources(): string[] {
    return [this.table.tableArn, ...TABLE_DEFINITION.globalSecondaryIndexes.map((g) => `${this.table.tableArn}/index/${g.indexName}`)];
  }

  /** The IAM path an execution role must have to be trusted by a tenant role (`none`: trusted by neither). */
  rolePath(access: TableAccess | 'none'): string {
    return access === 'none' ? this.pathPrefix : `${this.pathPrefix}tenant-${access}/`;
  }

  roleFor(access: TableAccess): iam.Role {
    return access === 'read' ? this.readRole : this.writeRole;
  }

  /**
   * Lets a function reach the table through the tenant role for `access`: sts:AssumeRole and sts:TagSession (the
   * tenant tag) on that role only (the function's own role gets no dynamodb action) and the environment
   * tenant-scope.ts reads.
   */
  bindTable(fn: TableBindable, access: TableAccess): void {
    if (fn.rolePath !== this.rolePath(access)) {
      throw new Error(
        `${fn.role.node.path}: a function bound for table ${access} must have role path ${this.rolePath(access)}, not ${fn.rolePath}`,
      );
    }
    const role = this.roleFor(access);
    fn.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'AssumeTenantRole', actions: ['sts:AssumeRole', 'sts:TagSession'], resources: [role.roleArn] }),
    );
    fn.addEnvironment('TABLE_NAME', this.table.tableName);
    fn.addEnvironment('TABLE_ARN', this.table.tableArn);
    fn.addEnvironment('TENANT_ROLE_ARN', role.roleArn);
  }

  /**
   * Table-wide data access for a principal that must work across tenants (an operator path). Every call is
   * recorded with its justification; the tests fail on any execution role holding dynamodb actions that is not
   * in this list.
   */
  grantTableWide(grantee: iam.IGrantable & { node: Construct['node'] }, access: TableAccess, justification: string): void {
    if (!justification.trim()) throw new Error('a table-wide grant needs a justification');
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({ sid: 'TableWideData', actions: [...TABLE_ACTIONS[access]], resources: this.dataResources }),
    );
    this.tableWideGrants.push({ principal: grantee.node.path, access, justification });
  }

  private tenantRole(id: string, access: TableAccess): iam.Role {
    const requestTag = `aws:RequestTag/${TENANT_TAG}`;
    const role = new iam.Role(this, id, {
      description: `Tenant-scoped ${access} access to the table; assumed by functions with a tenant session tag`,
      // One statement for sts:AssumeRole and sts:TagSession, both conditioned on the tag: a request without it
      // (StringLike on an absent key is false) matches no Allow. Only the tenant tag may be set, and not as
      // transitive, so a tenant session passes nothing on to a role it could chain to.
      assumedBy: new iam.AccountPrincipal(Aws.ACCOUNT_ID)
        .withConditions({
          ArnLike: { 'aws:PrincipalArn': `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:role${this.rolePath(access)}*` },
          StringLike: { [requestTag]: TENANT_TAG_SHAPE },
          'ForAllValues:StringEquals': { 'aws:TagKeys': [TENANT_TAG] },
          Null: { [requestTag]: 'false', 'sts:TransitiveTagKeys': 'true' },
        })
        .withSessionTags(),
      // tenant-scope.ts asks for one hour and refreshes five minutes before expiry.
      maxSessionDuration: Duration.hours(1),
    });
    const tagged = (patterns: string[]) => ({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': patterns } });
    role.addToPolicy(
      new iam.PolicyStatement({
        sid: 'TenantData',
        actions: [...TABLE_ACTIONS[access]],
        resources: this.dataResources,
        conditions: tagged([TENANT_TAG_LEADING_KEYS]),
      }),
    );
    if (access === 'write') {
      // The data statement's `T#<tenant>#*` admits the tenant's operator-set limits (rl#config) too, and StringLike
      // cannot subtract: an explicit Deny (which no Allow overrides) keeps them read-only, so a function cannot raise
      // its own tenant's rate limits. LeadingKeys is the partition key, which the config item has to itself.
      role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'OperatorOnlyItems',
          effect: iam.Effect.DENY,
          actions: [...ITEM_WRITE_ACTIONS],
          resources: [this.table.tableArn],
          conditions: { 'ForAnyValue:StringLike': { 'dynamodb:LeadingKeys': [...OPERATOR_ONLY_LEADING_KEYS] } },
        }),
      );
    }
    if (access === 'read') {
      // Every authenticated request leases rate-limit tokens (shared/http/rate-limit.ts), GETs too: only the tagged
      // tenant's bucket shards, not its operator-set limits (rl#config), which stay read-only like any item.
      role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'RateLimitLeases',
          actions: [...LIMITER_ACTIONS],
          resources: [this.table.tableArn],
          conditions: tagged(limiterLeaseLeadingKeys(TENANT_TAG_VARIABLE)),
        }),
      );
    }
    return role;
  }
}
