/**
 * Layer rules, checked by dependency-cruiser (`npm run lint:layers`; docs/architecture.md, "Layer rules").
 * Type-only imports are in the graph and marked (tsPreCompilationDeps: 'specify'): they count for the layer rules
 * (a type is knowledge of a layer too) and for the pure core's reach (domain-no-aws-sdk), not for cycles or for
 * where run-time code may import the SDK (aws-sdk-only-in-adapters), since they are erased before anything runs
 * and pull no code into a bundle.
 * No violation is known: none may be added (no baseline file).
 */

/** Modules that may import the AWS SDK: the store and the adapters behind the ports (queue, mail, AI, KMS, events, stream). */
const SDK_ADAPTERS =
  '^shared/(db/|queue/sqs[.]ts$|email/ses[.]ts$|ai/bedrock-sdk[.]ts$|auth/kms-[^/]+[.]ts$|events/event-bus[.]ts$|stream/changes[.]ts$)';

/** The pure core: the domain's entity definitions and decisions (no I/O), and the goal rules and refusals they share. */
const PURE_CORE = '^shared/domain/([^/]+/entity|[^/]+/decide[^/]*|goals/rules|goals/refusals)[.]ts$';

module.exports = {
  forbidden: [
    {
      name: 'domain-not-to-edges',
      severity: 'error',
      comment:
        'The domain (business rules) is the core: HTTP, request/response schemas, presenters, the route table and the change stream are built on it, never the other way. Reaching any of them, even transitively, ties business rules to one transport or to the stream projections and makes cycles. Code the domain and the stream both need (e.g. the goal read-model keys) lives in a neutral folder such as shared/read-models/.',
      from: { path: '^shared/domain/' },
      to: { reachable: true, path: '^shared/(schemas|http|presenters|routes|stream)/' },
    },
    {
      name: 'domain-no-aws-sdk',
      severity: 'error',
      comment:
        "Domain code never touches the AWS SDK (handbook). The pure core (every entity.ts and decide*.ts under shared/domain, goals/rules.ts and goals/refusals.ts: no I/O) reaches no @aws-sdk/ module at all, even transitively, even through a type-only import: a type is knowledge of the SDK too, and a type's module is one run-time import away from loading it. What the core needs lives in pure modules the store builds on (the entity model shared/db/model.ts, the grant type shared/function-grant.ts, the goal refusals goals/refusals.ts), never in the store's client (the store's DataCtx is shared/db/data-ctx.ts). The rest of the domain calls the store and so reaches the SDK through it; it imports none itself (aws-sdk-only-in-adapters).",
      from: { path: PURE_CORE },
      to: { reachable: true, path: '(^|/)@aws-sdk/' },
    },
    {
      name: 'aws-sdk-only-in-adapters',
      severity: 'error',
      comment:
        'Run-time code imports the AWS SDK only in the store (shared/db) and the named port adapters (sqs, ses, bedrock-sdk, kms-*, event-bus, stream/changes). So every path from a domain service to the SDK ends in the store or a port adapter (a service calls the store; only the pure core must reach no SDK at all: domain-no-aws-sdk). A new module that needs the SDK is an adapter: add it to SDK_ADAPTERS.',
      from: { path: '^(shared|functions)/', pathNot: SDK_ADAPTERS },
      to: { path: '(^|/)@aws-sdk/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'store-not-to-domain',
      severity: 'error',
      comment:
        'The store (shared/db) is the persistence layer under the domain: the domain calls it, so the store reaching the domain (even transitively) is a cycle between layers and makes data access depend on business rules. What both need (ids, key formats) lives below both (shared/ids.ts, shared/db/keys.ts).',
      from: { path: '^shared/db/' },
      to: { reachable: true, path: '^shared/domain/' },
    },
    {
      name: 'store-not-to-command',
      severity: 'error',
      comment:
        'The command runner (shared/command/) is a concept above the store: it reads through a command, asks its pure decision and commits what the command mapped it to, through the store. The store reaching the runner (even transitively) would put the command shape back inside the persistence layer.',
      from: { path: '^shared/db/' },
      to: { reachable: true, path: '^shared/command/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A run-time import cycle makes module initialisation order matter (a value read before its module has run is undefined), hides which module owns what, and defeats the layering. Type-only imports are erased, so they are left out of cycles.',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'function-not-to-other-function',
      severity: 'error',
      comment:
        "Each functions/<area>/ folder is bundled into its own Lambdas: importing another area's handler file drags its code (and its cold-start cost) into this bundle and couples two endpoints. Shared code belongs in shared/.",
      from: { path: '^functions/([^/]+)/' },
      to: { path: '^functions/', pathNot: '^functions/$1/' },
    },
  ],
  options: {
    // Type-only imports kept and marked `type-only` (see the header comment).
    tsPreCompilationDeps: 'specify',
    doNotFollow: { path: 'node_modules' },
    moduleSystems: ['es6', 'cjs'],
    tsConfig: { fileName: 'tsconfig.json' },
    // `#shared/*` and `#functions/*` are package.json "imports", which enhanced-resolve reads by default.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
