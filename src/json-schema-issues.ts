/**
 * The validator's output units turned into issues the model can act on: one line per problem, at the
 * path in the input where it is, saying what the value must be (`must be string`, `is required`,
 * `must be one of "a", "b"`), without the units that only say "a subschema had errors".
 */
import type { OutputUnit } from '@cfworker/json-schema';
import { cutText } from './cut.js';
import { isObject } from './json-schema-walk.js';
import { type ValidationIssue, formatPath } from './validation.js';

/** `1 property`, `2 properties`: a count with its noun. */
const amount = (value: unknown, one: string, many: string) => `${String(value)} ${value === 1 ? one : many}`;

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

/**
 * `value`: the input the units are about (its arrays tell an index from a property named `"1"`).
 */
export function toIssues(units: readonly OutputUnit[], keywordAt: KeywordLookup, value: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  const hidden = unevaluatedBesideIssues(units);
  containsItemUnits(units, hidden);
  units.forEach((unit, index) => {
    if (WRAPPERS.has(unit.keyword) || hidden.has(index)) return;
    const issue = toIssue(unit, keywordAt, value);
    const key = `${issue.path}\n${issue.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    issues.push(issue);
  });
  // Never an empty list for an invalid input: the wrappers' own sentences, if they were all there was.
  if (issues.length === 0) for (const unit of units) issues.push({ path: pathOf(value, unit.instanceLocation), message: unit.error });
  return issues;
}

/**
 * The units an `unevaluatedProperties`/`unevaluatedItems` gave for a property (or an item) that has
 * issues of its own: a declared property whose value is wrong is "unevaluated" to the validator
 * (only a valid one counts as evaluated), and "city: is not allowed" beside "city: must be string"
 * would tell the model to leave out a property the schema asks for. The units of one such keyword
 * come right after its wrapper unit, at the property's place or below it.
 */
function unevaluatedBesideIssues(units: readonly OutputUnit[]): Set<number> {
  const judged = new Map<number, string>();
  for (let index = 0; index < units.length; index++) {
    const { keyword, instanceLocation } = units[index]!;
    if (keyword !== 'unevaluatedProperties' && keyword !== 'unevaluatedItems') continue;
    const prefix = `${instanceLocation}/`;
    const first = units[index + 1]?.instanceLocation;
    if (first === undefined || !first.startsWith(prefix)) continue;
    const place = prefix + first.slice(prefix.length).split('/')[0]!;
    while (index + 1 < units.length && within(units[index + 1]!.instanceLocation, place)) judged.set(++index, place);
  }
  if (judged.size === 0) return new Set();
  // Every place that has an issue of another keyword, with the places above it.
  const placesWithIssues = new Set<string>();
  units.forEach((unit, index) => {
    if (judged.has(index) || WRAPPERS.has(unit.keyword)) return;
    for (let place = unit.instanceLocation; place.length > 0; place = place.slice(0, Math.max(0, place.lastIndexOf('/')))) placesWithIssues.add(place);
  });
  return new Set([...judged].filter(([, place]) => placesWithIssues.has(place)).map(([index]) => index));
}

/**
 * Adds to `hidden` the units that say why items did not match a `contains` that failed (`minContains`
 * keeps them): an item need not match it, and "a[1]: must be number" would tell the model to change
 * an item that may stay. The keyword's own unit says what the array must hold.
 */
function containsItemUnits(units: readonly OutputUnit[], hidden: Set<number>): void {
  const below: string[] = [];
  for (const { keyword, keywordLocation } of units) {
    if (keyword === 'minContains' || keyword === 'maxContains') below.push(`${keywordLocation.slice(0, -keyword.length)}contains/`);
  }
  if (below.length === 0) return;
  units.forEach((unit, index) => {
    if (below.some((prefix) => unit.keywordLocation.startsWith(prefix))) hidden.add(index);
  });
}

function within(location: string, place: string): boolean {
  return location === place || location.startsWith(`${place}/`);
}

function toIssue(unit: OutputUnit, keywordAt: KeywordLookup, input: unknown): ValidationIssue {
  const found = keywordAt(unit.keywordLocation.replace(/\/dependantRequired$/, '/dependentRequired'));
  const value = found?.value;
  const schema = found?.schema ?? {};
  const issue = (message: string, name?: string): ValidationIssue => ({ path: pathOf(input, unit.instanceLocation, name), message });
  // The validator's own sentence, when the keyword's value cannot be found to say it better.
  const ownSentence = () => issue(unit.error.replace(/^Instance /, 'the value ').replace(/\.$/, ''));
  switch (unit.keyword) {
    case 'false':
      return issue('is not allowed');
    case 'required': {
      // The name is not escaped in the sentence: read it whole, quotes and all.
      const name = /^Instance does not have required property "([^]*)"\.$/.exec(unit.error)?.[1];
      return name === undefined ? ownSentence() : issue('is required', name);
    }
    case 'dependentRequired':
    case 'dependencies': {
      const pair = dependency(unit.error, value);
      if (pair?.[1] !== undefined) return issue(`is required when ${JSON.stringify(pair[0])} is present`, pair[1]);
      const name = /^Instance has "([^]*)" but does not match dependant schema\.$/.exec(unit.error)?.[1];
      return issue(`must match the schema that ${name === undefined ? 'another property' : JSON.stringify(name)} requires`);
    }
    case 'type': {
      if (value === undefined) return ownSentence();
      return issue(`must be ${(Array.isArray(value) ? value : [value]).join(' or ')}`);
    }
    case 'enum':
      return issue(`must be one of ${listValues(value)}`);
    case 'const':
      return found ? issue(`must be ${JSON.stringify(value)}`) : ownSentence();
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
      return issue(`must have at least ${amount(value, 'character', 'characters')}`);
    case 'maxLength':
      return issue(`must have at most ${amount(value, 'character', 'characters')}`);
    case 'pattern':
      return issue(`must match the pattern ${JSON.stringify(value)}`);
    case 'minItems':
      return issue(`must have at least ${amount(value, 'item', 'items')}`);
    case 'maxItems':
      return issue(`must have at most ${amount(value, 'item', 'items')}`);
    case 'uniqueItems':
      return issue(`must not have duplicate items (${unit.error.replace(/^Duplicate items at indexes (\d+) and (\d+)\.$/, 'items $1 and $2 are equal')})`);
    case 'minProperties':
      return issue(`must have at least ${amount(value, 'property', 'properties')}`);
    case 'maxProperties':
      return issue(`must have at most ${amount(value, 'property', 'properties')}`);
    case 'propertyNames': {
      const name = /^Property name "([^]*)" does not match schema\.$/.exec(unit.error)?.[1];
      // The unit is at the object; the name is the place.
      return name === undefined ? ownSentence() : issue('is not an allowed property name', name);
    }
    case 'anyOf':
      return issue('must match at least one of the schemas in anyOf (the issues of each follow)');
    case 'oneOf':
      return issue(`must match exactly one of the schemas in oneOf (${unit.error.match(/\((\d+) matches\)/)?.[1] ?? 'not one'} match)`);
    case 'not':
      return issue('must not match the schema in "not"');
    case 'contains':
      return found ? issue(`must contain at least one item matching ${shownSchema(value)}`) : ownSentence();
    case 'minContains':
    case 'maxContains': {
      if (!found || !('contains' in schema)) return ownSentence();
      const bound = unit.keyword === 'minContains' ? 'at least' : 'at most';
      return issue(`must contain ${bound} ${itemCount(String(value))} matching ${shownSchema(schema.contains)}${containsCount(unit.error)}`);
    }
    default:
      // then, else, format, ...: the validator's own sentence.
      return ownSentence();
  }
}

/**
 * Which name requires which, from the sentence `Instance has "a" but does not have "b".`, where the
 * names are not escaped: matched against the pairs the keyword's value (`{a: ["b"]}`) holds.
 */
function dependency(sentence: string, map: unknown): [string, string] | undefined {
  if (!isObject(map)) return undefined;
  for (const name in map) {
    const names = map[name];
    if (!Array.isArray(names)) continue;
    for (const other of names) if (sentence === `Instance has "${name}" but does not have "${String(other)}".`) return [name, String(other)];
  }
  return undefined;
}

/**
 * The issue's path: the unit's place in the input (`#/items/0/a~1b`), and `name` below it (a
 * property that is missing). A segment is an index where the input holds an array there, so that a
 * property named "1" reads `["1"]`, not `[1]`.
 */
function pathOf(input: unknown, pointer: string, name?: string): string {
  const segments: PropertyKey[] = [];
  let value = input;
  for (const segment of pointerSegments(pointer)) {
    const index = Array.isArray(value) && /^\d+$/.test(segment) ? Number(segment) : undefined;
    segments.push(index ?? segment);
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[segment] : undefined;
  }
  if (name !== undefined) segments.push(name);
  return formatPath(segments);
}

/** A subschema as the model reads it in a message: its JSON, without the validator's marks, cut past 200 characters. */
function shownSchema(schema: unknown): string {
  const json = JSON.stringify(schema, (key, value: unknown) => (key.startsWith('__absolute_') ? undefined : value)) ?? String(schema);
  return json.length <= 200 ? json : `${cutText(json, 200)}…`;
}

const itemCount = (count: string) => (count === '1' ? '1 item' : `${count} items`);

/**
 * How many items matched, from the validator's sentence ("Only 1 items were found.", "3 items were found."), or how
 * many the array has ("Array has less items (1) than minContains (2)."): ` (1 does)`, ` (it has 1 item)`, or nothing.
 */
function containsCount(sentence: string): string {
  const matching = /(\d+) items were found\.$/.exec(sentence)?.[1];
  if (matching !== undefined) return ` (${matching} ${matching === '1' ? 'does' : 'do'})`;
  const length = /^Array has less items \((\d+)\)/.exec(sentence)?.[1];
  return length === undefined ? '' : ` (it has ${itemCount(length)})`;
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

/** The schema a node's `$ref` (or `$recursiveRef`) points to. */
export type Resolve = (node: Record<string, unknown>, keyword?: '$ref' | '$recursiveRef') => unknown;

/** Follows `keywordLocation` (`#/properties/a/$ref/type`) through the schema, resolving each `$ref` and `$recursiveRef` with `resolve`. */
export function keywordLookup(root: unknown, resolve: Resolve): KeywordLookup {
  return (keywordLocation) => {
    const segments = pointerSegments(keywordLocation);
    const keyword = segments.pop();
    if (keyword === undefined) return undefined;
    let node: unknown = root;
    for (const segment of segments) {
      if (!isObject(node) && !Array.isArray(node)) return undefined;
      const reference = segment === '$ref' || segment === '$recursiveRef';
      node = reference && isObject(node) ? resolve(node, segment) : (node as Record<string, unknown>)[segment];
    }
    return isObject(node) ? { value: node[keyword], schema: node } : undefined;
  };
}
