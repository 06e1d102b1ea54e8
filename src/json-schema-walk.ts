/**
 * Where a JSON Schema holds subschemas, by keyword, for every draft from 4 to 2020-12: the one map
 * that the schema check, the defaults and the validator's copy of the schema walk by; and which
 * draft a schema is written in.
 */

/** Keywords whose value is one subschema (`items` too, when it is not an array). */
const ONE: ReadonlySet<string> = new Set([
  'additionalItems',
  'unevaluatedItems',
  'items',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
]);

/** Keywords whose value is an array of subschemas (`items` too, when it is an array: a tuple). */
const LIST: ReadonlySet<string> = new Set(['prefixItems', 'items', 'allOf', 'anyOf', 'oneOf']);

/** Keywords whose value maps names to subschemas. */
const MAP: ReadonlySet<string> = new Set(['$defs', 'definitions', 'properties', 'patternProperties', 'dependentSchemas']);

/** One subschema and where it is: the keys from the parent schema down to it. */
type SubschemaVisitor = (schema: unknown, where: readonly string[]) => void;

/** Calls `visit` for each direct subschema of `schema` (not recursively). */
export function forEachSubschema(schema: Record<string, unknown>, visit: SubschemaVisitor): void {
  for (const key in schema) {
    const value = schema[key];
    if (Array.isArray(value) && LIST.has(key)) {
      value.forEach((sub, index) => visit(sub, [key, String(index)]));
    } else if (ONE.has(key)) {
      // A list where one schema belongs too (`not: []`): the check says so.
      visit(value, [key]);
    } else if (MAP.has(key) || (key === 'dependencies' && isObject(value))) {
      if (!isObject(value)) continue;
      for (const name in value) {
        // `dependencies` mixes subschemas with arrays of property names (draft 4 to 7).
        if (key === 'dependencies' && Array.isArray(value[name])) continue;
        visit(value[name], [key, name]);
      }
    }
  }
}

/** Whether the value at `key` of a schema holds subschemas (so a `format` or `default` found there is a name, not a keyword). */
export function holdsSubschemas(key: string): boolean {
  return ONE.has(key) || LIST.has(key) || MAP.has(key) || key === 'dependencies';
}

/** The value at `key` of a schema (one that `holdsSubschemas`) with `map` applied to each of its subschemas. */
export function mapSubschemas(key: string, value: unknown, map: (schema: unknown) => unknown): unknown {
  if (Array.isArray(value)) return LIST.has(key) ? value.map(map) : value;
  if (ONE.has(key)) return map(value);
  if (!isObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const name in value) setOwn(copy, name, Array.isArray(value[name]) ? value[name] : map(value[name]));
  return copy;
}

/**
 * Sets `key` of a copy being made: a `__proto__` key (a property of that name in a schema or an input that came from
 * JSON, where `JSON.parse` makes it an own key) stays an own key, which an assignment would not make (it sets the prototype).
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The JSON Schema drafts the validator knows (6 is read as 7). */
export type Draft = '4' | '7' | '2019-09' | '2020-12';

/** The draft `$schema` names; without one, 2020-12 (the API's draft for `input_schema`). */
export function draftOf($schema: unknown): Draft {
  if (typeof $schema !== 'string') return '2020-12';
  if ($schema.includes('draft-04')) return '4';
  if ($schema.includes('draft-06') || $schema.includes('draft-07')) return '7';
  if ($schema.includes('2019-09')) return '2019-09';
  return '2020-12';
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
