/**
 * `instanceof` across copies of this package: the CommonJS build bundles each entry whole, so an
 * error thrown by `tool-runner/dbos`'s copy of the runner is an instance of that copy's class, not of
 * the class `tool-runner` exports. A branded class also owns the instances of its namesakes in other
 * copies, by a registered symbol on their prototypes.
 */
export function brandClass(owner: abstract new (...args: never[]) => object, name: string): void {
  const brand = Symbol.for(`tool-runner.class.${name}.v1`);
  Object.defineProperty(owner.prototype, brand, { value: true });
  Object.defineProperty(owner, Symbol.hasInstance, {
    value(this: unknown, value: unknown): boolean {
      if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
      // By brand only for the branded class itself: a subclass keeps the usual meaning.
      return this === owner && typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
    },
  });
}
