import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Stack, Stage, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { buildApp } from '../../infra/build.ts';
import type { GoalTrackingStack } from '../../infra/stack.ts';
import { REPO_ROOT } from '../../infra/paths.ts';
import { routes as routeTable, workers as workerTable, type Route, type Worker } from '#shared/routes/index.ts';

/** The feature flags and settings of cdk.json, so tests build the app exactly as `cdk synth` does. */
export const cdkContext: Record<string, unknown> = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')).context;

/**
 * A worker/route shape the tables may not have yet: every branch of the stack (sendsTo, kms needs, e-mail,
 * several queues) is exercised whatever the route table holds today. Handlers point at existing files; the
 * stack tests skip bundling (the synth test bundles the real table).
 */
export const extraWorkers: Worker[] = [
  {
    queue: 'fixture-rollup',
    handler: 'functions/platform/openapi.ts',
    maxReceiveCount: 3,
    batchSize: 5,
    timeoutSeconds: 60,
    table: 'write',
    sendsTo: ['fixture-mail'],
    maxConcurrency: 3,
    batchWindowSeconds: 5,
  },
  {
    queue: 'fixture-mail',
    handler: 'functions/platform/openapi.ts',
    maxReceiveCount: 5,
    batchSize: 10,
    timeoutSeconds: 20,
    table: 'none',
    sendsEmail: true,
    maxConcurrency: 2,
  },
];

export const extraRoutes: Route[] = [
  {
    method: 'POST',
    path: '/fixture/tokens',
    handler: 'functions/platform/openapi.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'goals:write',
    table: 'write',
    sendsTo: ['fixture-rollup'],
    needs: ['kms:sign'],
    doc: { summary: 'fixture', tag: 'fixture', success: { status: 200 } },
  },
  {
    method: 'GET',
    path: '/fixture/public',
    handler: 'functions/platform/openapi.ts',
    auth: 'public',
    door: 'public',
    table: 'read',
    doc: { summary: 'fixture', tag: 'fixture', success: { status: 200 } },
  },
  {
    method: 'DELETE',
    path: '/fixture/none',
    handler: 'functions/platform/openapi.ts',
    auth: 'jwt',
    door: 'rest',
    scope: 'directory:write',
    table: 'none',
    doc: { summary: 'fixture', tag: 'fixture', success: { status: 200 } },
  },
];

export const allRoutes = [...routeTable, ...extraRoutes];
export const allWorkers = [...workerTable, ...extraWorkers];

/**
 * Builds the app as `cdk synth` does, minus bundling (asset content is irrelevant to these assertions) and,
 * unless asked, minus the cdk-nag plugins at synthesis (nag.test.ts runs them on the construct tree itself).
 */
export function build(opts: { context?: Record<string, unknown>; routes?: Route[]; workers?: Worker[]; nag?: boolean } = {}) {
  return buildApp({
    nag: opts.nag ?? false,
    context: { ...cdkContext, 'aws:cdk:bundling-stacks': [], ...opts.context },
    routes: opts.routes ?? allRoutes,
    workers: opts.workers ?? allWorkers,
  });
}

export type Json = Record<string, any>;

/** The logical id of a construct's resource, in whichever (nested) stack it lives. */
export const logicalId = (c: IConstruct) => Stack.of(c).getLogicalId((c.node.defaultChild ?? c) as CfnElement);

function substitute(x: unknown, replace: (node: Json) => unknown): unknown {
  if (Array.isArray(x)) return x.map((v) => substitute(v, replace));
  if (x && typeof x === 'object') {
    const r = replace(x as Json);
    if (r !== undefined) return r;
    return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, substitute(v, replace)]));
  }
  return x;
}

/**
 * The parent template with every nested (route group) template folded in, as if it were one stack: a nested
 * template's `Ref` to one of its parameters becomes the value the parent passes, and the parent's
 * `Fn::GetAtt [nested, Outputs.X]` becomes the nested output's value. Assertions then read one template and
 * logical ids, whichever stack a resource is in.
 */
export function mergedTemplate(stack: GoalTrackingStack): Template {
  // One synthesis, every template read from the cloud assembly (Template.fromStack would synthesize per stack).
  const assembly = Stage.of(stack)!.synth();
  const read = (s: Stack): Json => JSON.parse(readFileSync(join(assembly.directory, s.templateFile), 'utf8'));
  const parent = read(stack);
  const resources: Json = { ...parent.Resources };
  const nestedOutputs = new Map<string, unknown>();
  for (const group of stack.routeGroups.values()) {
    const nestedId = logicalId(group.nestedStackResource!);
    const params: Json = parent.Resources[nestedId].Properties.Parameters ?? {};
    const nested = read(group);
    const fromParent = (n: Json) => (typeof n.Ref === 'string' && n.Ref in params ? params[n.Ref] : undefined);
    for (const [k, v] of Object.entries<Json>(nested.Resources)) {
      if (k in resources) throw new Error(`logical id ${k} in two stacks`);
      resources[k] = substitute(v, fromParent);
    }
    for (const [k, v] of Object.entries<Json>(nested.Outputs ?? {}))
      nestedOutputs.set(`${nestedId}/Outputs.${k}`, substitute(v.Value, fromParent));
  }
  const fromNested = (n: Json) => {
    const g = n['Fn::GetAtt'];
    return Array.isArray(g) && typeof g[1] === 'string' && g[1].startsWith('Outputs.') ? nestedOutputs.get(`${g[0]}/${g[1]}`) : undefined;
  };
  return Template.fromJSON({ Resources: substitute(resources, fromNested), Outputs: substitute(parent.Outputs, fromNested) } as Json, {
    skipCyclicalDependenciesCheck: true,
  });
}

export interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Json;
  Sid?: string;
}

export const asArray = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** Every identity-policy statement attached to a role: inline policies, AWS::IAM::Policy, managed policies. */
export function roleStatements(template: Template, roleLogicalId: string): Statement[] {
  const t = template.toJSON();
  const out: Statement[] = [];
  const role = t.Resources[roleLogicalId];
  for (const p of role.Properties.Policies ?? []) out.push(...p.PolicyDocument.Statement);
  for (const r of Object.values<Json>(t.Resources)) {
    if (r.Type === 'AWS::IAM::Policy' && asArray(r.Properties.Roles).some((x: Json) => x.Ref === roleLogicalId))
      out.push(...r.Properties.PolicyDocument.Statement);
    if (r.Type === 'AWS::IAM::ManagedPolicy' && asArray(r.Properties.Roles).some((x: Json) => x.Ref === roleLogicalId))
      out.push(...r.Properties.PolicyDocument.Statement);
  }
  if (role.Properties.ManagedPolicyArns?.length)
    out.push({ Effect: 'Allow', Action: 'MANAGED_POLICY', Resource: role.Properties.ManagedPolicyArns });
  return out;
}

/** `{ "Fn::GetAtt": [id, "Arn"] }` / `{ Ref: id }` → id; anything else → JSON. */
export function refId(x: unknown): string {
  const j = x as Json;
  if (j && typeof j === 'object') {
    if ('Ref' in j) return j.Ref;
    if ('Fn::GetAtt' in j) return j['Fn::GetAtt'][0];
  }
  return JSON.stringify(x);
}

/** The Lambda functions of the template by their description (`METHOD /path` or `Worker for queue <q>`). */
export function functionsByDescription(template: Template): Map<string, { id: string; props: Json }> {
  const out = new Map<string, { id: string; props: Json }>();
  for (const [id, r] of Object.entries<Json>(template.findResources('AWS::Lambda::Function')))
    out.set(r.Properties.Description, { id, props: r.Properties });
  return out;
}
