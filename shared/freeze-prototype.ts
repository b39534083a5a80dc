/**
 * Freezes Object.prototype, so that no request can add to it or change it: a property added there is seen by
 * every object of the process, every tenant's requests included (`role` read by a user created later, `endpoint`
 * by an SDK client built later). Done once per process, before any request: every deployed function runs it
 * before any other code (infra/constructs/service-bundling.ts compiles this file into each bundle's banner), the
 * local stack as it starts (scripts/local-stack.ts, scripts/lib/local-stack.ts).
 *
 * A plain `Object.freeze(Object.prototype)` breaks code that assigns an inherited name on an object of its own
 * (`config.toString = 'x'`, `proto.constructor = C`): with the inherited property read-only, the assignment
 * throws in strict code (the "override mistake"). Tried against the local stack, it made a data source whose config
 * holds a key `toString` a 500. So, as SES's lockdown does, each data property of Object.prototype first becomes
 * an accessor whose getter returns the same value and whose setter, on any object but Object.prototype itself,
 * defines the property on that object as an assignment would (writable, enumerable, configurable); on
 * Object.prototype it throws, as a frozen property's assignment would. Then the prototype is frozen: no property
 * can be added, removed or redefined, and `Object.isFrozen(Object.prototype)` is true.
 *
 * Self-contained (no import, nothing but this function and what it calls): the bundles' banner is this file's text.
 */
export function freezeObjectPrototype(): void {
  const proto = Object.prototype;
  if (Object.isFrozen(proto)) return;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const desc = Object.getOwnPropertyDescriptor(proto, name)!;
    if (!('value' in desc) || !desc.configurable) continue; // __proto__ is an accessor already
    const value: unknown = desc.value;
    Object.defineProperty(proto, name, {
      get() {
        return value;
      },
      set(this: unknown, next: unknown) {
        if (this === proto) throw new TypeError(`Cannot assign to read only property '${name}' of Object.prototype`);
        if (this === null || (typeof this !== 'object' && typeof this !== 'function'))
          throw new TypeError(`Cannot create property '${name}' on ${typeof this}`);
        if (Object.hasOwn(this, name)) (this as Record<string, unknown>)[name] = next;
        else Object.defineProperty(this, name, { value: next, writable: true, enumerable: true, configurable: true });
      },
      enumerable: desc.enumerable,
      configurable: false,
    });
  }
  Object.freeze(proto);
}
