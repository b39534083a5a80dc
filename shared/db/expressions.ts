/**
 * A condition on one item, all parts ANDed: `exists` (the item is there / is not), attributes equal to
 * values, attributes at most a value. Values are passed as expression values, never spliced into text.
 */
export interface ItemCondition {
  exists?: boolean;
  equals?: Record<string, unknown>;
  atMost?: Record<string, string | number>;
}

/** Builds a condition (and update) expression with generated placeholders. */
export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private n = 0;
  name(attr: string) {
    const k = `#a${this.n++}`;
    this.names[k] = attr;
    return k;
  }
  value(v: unknown) {
    const k = `:v${this.n++}`;
    this.values[k] = v;
    return k;
  }
  condition(c: ItemCondition | undefined): string | undefined {
    if (!c) return undefined;
    const parts: string[] = [];
    if (c.exists !== undefined) parts.push(c.exists ? 'attribute_exists(PK)' : 'attribute_not_exists(PK)');
    for (const [a, v] of Object.entries(c.equals ?? {})) parts.push(`${this.name(a)} = ${this.value(v)}`);
    for (const [a, v] of Object.entries(c.atMost ?? {})) parts.push(`${this.name(a)} <= ${this.value(v)}`);
    return parts.length ? parts.join(' AND ') : undefined;
  }
  /** Spreads the names/values into a command input (omitted when empty: DynamoDB refuses empty maps). */
  attrs() {
    return {
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}
