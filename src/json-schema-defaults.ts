/**
 * A JSON Schema's `default`s written into the input before it is validated, as ajv's `useDefaults`
 * did: a missing property whose schema under `properties` has a `default` gets a copy of it, in
 * nested objects and array items too, through `allOf` and `$ref`; never inside `anyOf`, `oneOf`
 * or `not`, where it is not known which branch applies.
 */
import { forEachSubschema, isObject } from './json-schema-walk.js';

type Resolve = (node: Record<string, unknown>) => unknown;

/** Whether any `properties` entry of the schema has a `default` (else applying them is skipped). */
export function hasDefaults(schema: unknown): boolean {
  if (!isObject(schema)) return false;
  const { properties } = schema;
  if (isObject(properties)) {
    for (const name in properties) {
      const property = properties[name];
      if (isObject(property) && 'default' in property) return true;
    }
  }
  let found = false;
  forEachSubschema(schema, (sub) => {
    found ||= hasDefaults(sub);
  });
  return found;
}

/** Writes the defaults that apply into `value` (a copy the caller owns). */
export function applyDefaults(schema: unknown, value: unknown, resolve: Resolve, hops = 0): void {
  if (!isObject(schema) || hops > 32) return;
  if (typeof schema.$ref === 'string') applyDefaults(resolve(schema), value, resolve, hops + 1);
  if (Array.isArray(schema.allOf)) for (const sub of schema.allOf) applyDefaults(sub, value, resolve, hops + 1);
  if (isObject(value)) {
    const { properties } = schema;
    if (!isObject(properties)) return;
    for (const name in properties) {
      const property = properties[name];
      if (!isObject(property) || name === '__proto__') continue;
      const present = Object.hasOwn(value, name);
      if (!present && 'default' in property) value[name] = structuredClone(property.default);
      if (present || 'default' in property) applyDefaults(property, value[name], resolve);
    }
  } else if (Array.isArray(value)) {
    const { items, prefixItems } = schema;
    const tuple = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined;
    value.forEach((item, index) => {
      const itemSchema = tuple && index < tuple.length ? tuple[index] : Array.isArray(items) ? undefined : items;
      applyDefaults(itemSchema, item, resolve);
    });
  }
}
