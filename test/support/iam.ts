/**
 * A tiny IAM policy evaluator for the tests that read policies (test/infra, the limiter's key test): enough of
 * IAM's semantics to ask "does any Allow statement match this request?", and no more. An operator it does not
 * know throws, so a policy that grows a new kind of condition fails the tests until this learns it.
 */

/** A request context: condition keys to one value, or several (multi-valued keys such as dynamodb:LeadingKeys). */
export type RequestContext = Record<string, string | string[] | undefined>;

export interface PolicyStatement {
  Sid?: string;
  Effect: string;
  Principal?: unknown;
  Action?: string | string[];
  Resource?: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}

const asList = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);

/** IAM `StringLike` / `ArnLike` / action and resource matching: `*` any run of characters, `?` one character, the rest literal. */
export const like = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  ).test(value);

/**
 * `${key}` policy variables replaced from the context; undefined when one names a key the request lacks (the
 * value then matches nothing). IAM's `${*}`, `${?}`, `${$}` literals are not used by these policies: refused.
 */
export function substitute(value: string, context: RequestContext): string | undefined {
  let missing = false;
  const out = value.replace(/\$\{([^}]*)\}/g, (_, key: string) => {
    if (key === '*' || key === '?' || key === '$') throw new Error(`policy literal \${${key}} not supported`);
    const v = context[key];
    if (typeof v !== 'string') missing = true;
    return typeof v === 'string' ? v : '';
  });
  return missing ? undefined : out;
}

const matchers: Record<string, (pattern: string, value: string) => boolean> = {
  StringEquals: (p, v) => p === v,
  StringLike: like,
  ArnLike: like,
  ArnEquals: (p, v) => p === v,
};

/** Whether one condition operator block holds (every key under it; any of a key's values). */
function operatorHolds(operator: string, block: Record<string, unknown>, context: RequestContext): boolean {
  const [set, base] = operator.includes(':') ? (operator.split(':') as [string, string]) : [undefined, operator];
  return Object.entries(block).every(([key, raw]) => {
    const values = asList(raw as string | string[]).map(String);
    const actual = context[key];
    if (base === 'Null') {
      if (set || values.length !== 1) throw new Error(`unsupported Null condition ${JSON.stringify(block)}`);
      return (actual === undefined) === (values[0] === 'true');
    }
    const match = matchers[base];
    if (!match) throw new Error(`condition operator ${operator} not supported`);
    const anyPattern = (v: string) =>
      values.some((p) => {
        const resolved = substitute(p, context);
        return resolved !== undefined && match(resolved, v);
      });
    if (set === 'ForAllValues') return asList(actual).every(anyPattern); // absent or empty: true, as in IAM
    if (set === 'ForAnyValue') return asList(actual).some(anyPattern);
    if (set !== undefined) throw new Error(`condition set operator ${set} not supported`);
    if (Array.isArray(actual)) throw new Error(`${key} is multi-valued: use ForAllValues or ForAnyValue`);
    return actual !== undefined && anyPattern(actual);
  });
}

export function conditionHolds(condition: PolicyStatement['Condition'], context: RequestContext): boolean {
  return Object.entries(condition ?? {}).every(([operator, block]) => operatorHolds(operator, block, context));
}

/** Whether an Allow statement matches the request (its action, its resource when given, every condition). */
export function statementAllows(s: PolicyStatement, request: { action: string; resource?: string; context: RequestContext }): boolean {
  if (s.Effect !== 'Allow') return false;
  if (!asList(s.Action).some((a) => like(a, request.action))) return false;
  if (
    request.resource !== undefined &&
    !asList(s.Resource as string | string[]).some((r) => typeof r === 'string' && like(r, request.resource!))
  )
    return false;
  return conditionHolds(s.Condition, request.context);
}

/** Whether any statement of the policy allows the request (no Deny statements in these policies: checked by the callers). */
export const policyAllows = (statements: PolicyStatement[], request: { action: string; resource?: string; context: RequestContext }) =>
  statements.some((s) => statementAllows(s, request));
