/**
 * The JSON Schema a `strict: true` tool of a zod (Standard) schema sends. `tool()` sends a zod schema's input form, whose
 * objects are open (no `additionalProperties`: zod drops an input's extra keys); the API's strict mode requires every
 * object to say `additionalProperties: false`, which the SDK's `betaZodTool` sends (zod's output form).
 */
import { holdsSubschemas, isObject, mapSubschemas, setOwn } from './json-schema-walk.js';

/** A copy of `schema` with each object schema that does not say `additionalProperties` closed. */
export function closedObjects(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const copy: Record<string, unknown> = {};
  for (const key in schema) setOwn(copy, key, holdsSubschemas(key) ? mapSubschemas(key, schema[key], closedObjects) : schema[key]);
  if (isObjectType(schema.type) && !('additionalProperties' in schema)) copy['additionalProperties'] = false;
  return copy;
}

function isObjectType(type: unknown): boolean {
  return type === 'object' || (Array.isArray(type) && type.includes('object'));
}
