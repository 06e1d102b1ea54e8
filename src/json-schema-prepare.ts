/**
 * The schema the validator gets: a copy of the caller's (which is never changed; the validator marks
 * the objects it is given), made once when the tool is defined, in the forms the validator reads as
 * ajv read the original: without `format` keywords (an annotation here) wherever a `$ref` may land;
 * with OpenAPI 3.0's boolean `exclusiveMaximum`/`exclusiveMinimum` as the numbers of draft 6 and
 * later, and its `nullable: true` as null in `type` and `enum`; with the keywords beside a draft-07
 * `$ref` enforced.
 */
import { ignoredKeyword } from '@cfworker/json-schema';
import { type Draft, holdsSubschemas, isObject, mapSubschemas, setOwn } from './json-schema-walk.js';

/** A key left out of the copy. */
const LEFT_OUT = Symbol('left out');

/** How a copy is made: `withoutUniqueItems` leaves every `uniqueItems` out; `sawUniqueItems` is set when one asserts. */
export interface Preparing {
  withoutUniqueItems?: boolean;
  sawUniqueItems?: boolean;
}

/** A copy of `schema` (an already checked schema of `draft`) as the validator is to read it. */
export function prepareSchema(schema: unknown, draft: Draft, preparing: Preparing = {}): unknown {
  const prepare = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(prepare);
    if (!isObject(node)) return node;
    // Built key by key (never a `delete` afterwards, which would slow down every read of the node).
    const copy: Record<string, unknown> = {};
    const refBeside = refWithKeywords(node, draft);
    for (const key in node) {
      if (refBeside && key === '$ref') continue;
      let value = holdsSubschemas(key)
        ? mapSubschemas(key, node[key], prepare)
        : isObject(node[key]) && !ignoredKeyword[key]
          ? prepare(node[key]) // An object under any other key is a schema a `$ref` may point to, as the validator's dereference reads it.
          : rewritten(node, key, draft, preparing);
      if (refBeside && key === 'allOf') value = [...(value as unknown[]), { $ref: node.$ref }];
      if (value !== LEFT_OUT) setOwn(copy, key, value);
    }
    if (refBeside && !('allOf' in node)) copy.allOf = [{ $ref: node.$ref }];
    return copy;
  };
  return prepare(schema);
}

/** Keywords that assert nothing: a `$ref` beside these alone is left as it is. */
const ANNOTATIONS: ReadonlySet<string> = new Set([
  '$ref', '$id', 'id', '$schema', '$comment', '$anchor', 'definitions', '$defs',
  'title', 'description', 'default', 'examples', 'readOnly', 'writeOnly', 'deprecated',
]);

/**
 * Whether `schema` (of draft 4, 6 or 7) has a `$ref` with keywords beside it that the validator would
 * ignore, as those drafts say, and ajv did not: `{$ref, ...rest}` goes to the validator as
 * `{...rest, allOf: [...rest.allOf, {$ref}]}`, which enforces both (an appended `allOf` entry keeps
 * the places of the others, which a `$ref` may point to).
 */
function refWithKeywords(schema: Record<string, unknown>, draft: Draft): boolean {
  if ((draft !== '4' && draft !== '7') || typeof schema.$ref !== 'string') return false;
  for (const key in schema) if (!ANNOTATIONS.has(key) && !key.startsWith('x-')) return true;
  return false;
}

/** The value of `key` of `schema` in the copy, or LEFT_OUT. */
function rewritten(schema: Record<string, unknown>, key: string, draft: Draft, preparing: Preparing): unknown {
  const value = schema[key];
  switch (key) {
    case 'uniqueItems':
      if (value === true) preparing.sawUniqueItems = true;
      return preparing.withoutUniqueItems ? LEFT_OUT : value;
    case 'format':
      return typeof value === 'string' ? LEFT_OUT : value;
    // `{maximum: 5, exclusiveMaximum: true}` (draft 4, and OpenAPI 3.0 whatever the draft) is
    // `{exclusiveMaximum: 5}` since draft 6; `exclusiveMaximum: false` says nothing. The same for the minimum.
    case 'maximum':
      return draft !== '4' && schema.exclusiveMaximum === true ? LEFT_OUT : value;
    case 'minimum':
      return draft !== '4' && schema.exclusiveMinimum === true ? LEFT_OUT : value;
    case 'exclusiveMaximum':
      return draft === '4' || typeof value !== 'boolean' ? value : value ? schema.maximum : LEFT_OUT;
    case 'exclusiveMinimum':
      return draft === '4' || typeof value !== 'boolean' ? value : value ? schema.minimum : LEFT_OUT;
    // OpenAPI 3.0's `nullable: true` (ajv took it): null is one more value the schema allows.
    case 'type':
      if (schema.nullable !== true) return value;
      if (Array.isArray(value)) return value.includes('null') ? value : [...value, 'null'];
      return value === 'null' ? value : [value, 'null'];
    case 'enum':
      return schema.nullable === true && Array.isArray(value) && !value.includes(null) ? [...value, null] : value;
    default:
      return value;
  }
}
