/**
 * The validator's output units turned into issues the model can act on: one line per problem, at the
 * path in the input where it is, saying what the value must be (`must be string`, `is required`,
 * `must be one of "a", "b"`), without the units that only say "a subschema had errors".
 */
import type { OutputUnit } from '@cfworker/json-schema';
import { isObject } from './json-schema-walk.js';
import { type ValidationIssue, formatPath } from './validation.js';

/** Keywords whose unit only says that something below failed; the units below say what. */
const WRAPPERS: ReadonlySet<string> = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'unevaluatedItems',
  'dependentSchemas',
  '$ref',
  '$recursiveRef',
  'allOf',
  'if',
]);

/** Resolves a unit's `keywordLocation` to the keyword's value in the schema (undefined when it cannot). */
type KeywordLookup = (keywordLocation: string) => { value: unknown; schema: Record<string, unknown> } | undefined;

export function toIssues(units: readonly OutputUnit[], keywordAt: KeywordLookup): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const unit of units) {
    if (WRAPPERS.has(unit.keyword)) continue;
    const issue = toIssue(unit, keywordAt);
    const key = `${issue.path}\n${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  // Never an empty list for an invalid input: the wrappers' own sentences, if they were all there was.
  if (issues.length === 0) for (const unit of units) issues.push({ path: formatPath(pointerSegments(unit.instanceLocation)), message: unit.error });
  return issues;
}

function toIssue(unit: OutputUnit, keywordAt: KeywordLookup): ValidationIssue {
  const segments = pointerSegments(unit.instanceLocation);
  const quoted = [...unit.error.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]!);
  const found = keywordAt(unit.keywordLocation);
  const value = found?.value;
  const schema = found?.schema ?? {};
  const issue = (message: string, extra: string[] = []): ValidationIssue => ({ path: formatPath([...segments, ...extra]), message });
  switch (unit.keyword) {
    case 'false':
      return issue('is not allowed');
    case 'required':
      return issue('is required', quoted.slice(0, 1));
    case 'dependentRequired':
    case 'dependencies':
      if (quoted.length >= 2) return issue(`is required when "${quoted[0]}" is present`, [quoted[1]!]);
      return issue(`must match the schema that "${quoted[0] ?? '?'}" requires`);
    case 'type': {
      const types = Array.isArray(value) ? value : [value ?? quoted[1]];
      return issue(`must be ${types.join(' or ')}`);
    }
    case 'enum':
      return issue(`must be one of ${listValues(value)}`);
    case 'const':
      return issue(`must be ${JSON.stringify(value)}`);
    case 'minimum':
      return issue(`must be ${schema.exclusiveMinimum === true ? '>' : '>='} ${String(value)}`);
    case 'maximum':
      return issue(`must be ${schema.exclusiveMaximum === true ? '<' : '<='} ${String(value)}`);
    case 'exclusiveMinimum':
      return issue(`must be > ${String(value)}`);
    case 'exclusiveMaximum':
      return issue(`must be < ${String(value)}`);
    case 'multipleOf':
      return issue(`must be a multiple of ${String(value)}`);
    case 'minLength':
      return issue(`must have at least ${String(value)} characters`);
    case 'maxLength':
      return issue(`must have at most ${String(value)} characters`);
    case 'pattern':
      return issue(`must match the pattern ${JSON.stringify(value)}`);
    case 'minItems':
      return issue(`must have at least ${String(value)} items`);
    case 'maxItems':
      return issue(`must have at most ${String(value)} items`);
    case 'uniqueItems':
      return issue(`must not have duplicate items (${unit.error.replace(/^Duplicate items at indexes (\d+) and (\d+)\.$/, 'items $1 and $2 are equal')})`);
    case 'minProperties':
      return issue(`must have at least ${String(value)} properties`);
    case 'maxProperties':
      return issue(`must have at most ${String(value)} properties`);
    case 'propertyNames':
      return issue('is not an allowed property name', quoted.slice(0, 1));
    case 'anyOf':
      return issue('must match at least one of the schemas in anyOf (the issues of each follow)');
    case 'oneOf':
      return issue(`must match exactly one of the schemas in oneOf (${unit.error.match(/\((\d+) matches\)/)?.[1] ?? 'not one'} match)`);
    case 'not':
      return issue('must not match the schema in "not"');
    default:
      // contains, minContains, maxContains, then, else, format, ...: the validator's own sentence.
      return issue(unit.error.replace(/^Instance /, 'the value ').replace(/\.$/, ''));
  }
}

function listValues(values: unknown): string {
  if (!Array.isArray(values)) return 'the allowed values';
  const shown = values.slice(0, 20).map((value) => JSON.stringify(value));
  return values.length > 20 ? `${shown.join(', ')}, … (${values.length} values)` : shown.join(', ');
}

/** `#/items/0/a~1b` → `['items', '0', 'a/b']` (the validator URI-encodes each segment). */
function pointerSegments(pointer: string): string[] {
  const body = pointer.startsWith('#') ? pointer.slice(1) : pointer;
  if (body === '') return [];
  return body
    .split('/')
    .slice(1)
    .map((segment) => safeDecode(segment).replace(/~1/g, '/').replace(/~0/g, '~'));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Follows `keywordLocation` (`#/properties/a/$ref/type`) through the schema, resolving each `$ref` with `resolve`. */
export function keywordLookup(root: unknown, resolve: (node: Record<string, unknown>) => unknown): KeywordLookup {
  return (keywordLocation) => {
    const segments = pointerSegments(keywordLocation);
    const keyword = segments.pop();
    if (keyword === undefined) return undefined;
    let node: unknown = root;
    for (const segment of segments) {
      if (!isObject(node) && !Array.isArray(node)) return undefined;
      node = segment === '$ref' && isObject(node) ? resolve(node) : (node as Record<string, unknown>)[segment];
    }
    return isObject(node) ? { value: node[keyword], schema: node } : undefined;
  };
}
