/**
 * Where a JSON Schema holds subschemas, by keyword, for every draft from 4 to 2020-12: the one map
 * that the schema check, the defaults and the format stripping walk by.
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
    if (Array.isArray(value)) {
      if (LIST.has(key)) value.forEach((sub, index) => visit(sub, [key, String(index)]));
    } else if (ONE.has(key)) {
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

/** Whether `key` of a schema holds names of properties (so a `format` or `default` there is a name, not a keyword). */
function holdsSubschemas(key: string): boolean {
  return ONE.has(key) || LIST.has(key) || MAP.has(key) || key === 'dependencies';
}

/** A schema with every `format` keyword removed (formats are annotations, as in 2019-09 and 2020-12's default). */
export function withoutFormats(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutFormats);
  if (!isObject(schema)) return schema;
  const copy: Record<string, unknown> = {};
  for (const key in schema) {
    if (key === 'format') continue;
    copy[key] = holdsSubschemas(key) ? mapSubschemas(key, schema[key]) : schema[key];
  }
  return copy;
}

function mapSubschemas(key: string, value: unknown): unknown {
  if (Array.isArray(value)) return LIST.has(key) ? value.map(withoutFormats) : value;
  if (ONE.has(key)) return withoutFormats(value);
  if (!isObject(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const name in value) copy[name] = Array.isArray(value[name]) ? value[name] : withoutFormats(value[name]);
  return copy;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
