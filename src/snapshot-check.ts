/**
 * A snapshot's shape, checked before a resumed run uses any of it: a stored snapshot may be damaged,
 * cut short or edited by hand. The first wrong field is a TypeError that names it by its path
 * (`snapshot.usage.input_tokens`), thrown before any request; optional fields may be missing.
 */
import { described } from './described.js';
import { invalidResultKind } from './result-kind.js';
import { SNAPSHOT_VERSION, type RunnerSnapshot } from './snapshot.js';
import { LIMIT_STOPS, type StoppedBy } from './stop-reason.js';

type Json = Record<string, unknown>;

const STOPS: Record<StoppedBy, true> = { model: true, max_iterations: true, approval: true, budget: true, loop_guard: true, abort: true, break: true, error: true };

/** Throws a TypeError naming the first field of `snapshot` that `runner.toJSON()` would not have written. */
export function checkSnapshot(snapshot: object, path = 'snapshot'): asserts snapshot is RunnerSnapshot {
  const json = snapshot as Json;
  // No version at all: no snapshot (the run's params given in its place, say), not one of another version.
  if (json['version'] === undefined) {
    // A sub-agent's state inside a snapshot: the snapshot given is the run's, one part of it is damaged.
    if (path !== 'snapshot') fail(`${path}.version`, `${SNAPSHOT_VERSION} (a sub-agent's state, as runner.toJSON() wrote it)`, undefined);
    throw new TypeError(`resumeToolRunner: ${path} has no version, so it is not a runner's snapshot: pass what runner.toJSON() gave (or its JSON read back)${'messages' in json ? ', not the params' : ''}`);
  }
  if (json['version'] !== SNAPSHOT_VERSION) {
    throw new TypeError(`resumeToolRunner: ${path} version ${JSON.stringify(json['version'])} is not supported (this version of tool-runner reads version ${SNAPSHOT_VERSION})`);
  }
  const params = record(json['params'], `${path}.params`);
  // Of the kinds every request needs (a client of the caller's own may fill them in, so they may be missing).
  optional(params, 'model', `${path}.params`, text);
  optional(params, 'max_tokens', `${path}.params`, count);
  list(params['messages'], `${path}.params.messages`).forEach((message, i) => checkMessage(message, `${path}.params.messages[${i}]`));
  list(json['tools'], `${path}.tools`).forEach((entry, i) => checkToolEntry(entry, `${path}.tools[${i}]`));
  count(json['iteration'], `${path}.iteration`);
  optional(json, 'requests', path, count);
  checkUsage(json['usage'], `${path}.usage`);
  each(json['notRun'], `${path}.notRun`, text);
  checkCalls(json['calls'], `${path}.calls`);
  optional(json, 'toolChanges', path, checkToolChanges);
  optional(json, 'thread', path, (thread, at) => {
    text(record(thread, at)['previous_message_id'], `${at}.previous_message_id`);
    count((thread as Json)['held'], `${at}.held`);
  });
  optional(json, 'stoppedBy', path, (stop, at) => oneOf(stop, STOPS, at));
  optional(json, 'lastMessage', path, checkMessage);
  optional(json, 'control', path, checkControl);
  optional(json, 'late', path, (late, at) => {
    count(record(late, at)['at'], `${at}.at`);
    count((late as Json)['count'], `${at}.count`);
  });
  optional(json, 'compaction', path, (compaction, at) => {
    optional(record(compaction, at), 'trigger', at, (trigger, inside) => oneOf(trigger, { 'just-compacted': true, off: true }, inside));
    optional(compaction as Json, 'scheduled', at, record);
    optional(compaction as Json, 'ending', at, (stop, inside) => oneOf(stop, STOPS, inside));
    optional(compaction as Json, 'owed', at, (owed, inside) => owed === true || fail(inside, 'true', owed));
  });
}

function checkMessage(value: unknown, path: string): void {
  const message = record(value, path);
  if (typeof message['content'] !== 'string') list(message['content'], `${path}.content`).forEach((block, i) => checkBlock(block, `${path}.content[${i}]`));
  text(message['role'], `${path}.role`);
}

/** A block: an object; a call the runner may answer, with its id and its tool's name (the runner reads both). */
function checkBlock(value: unknown, path: string): void {
  const block = record(value, path);
  if (block['type'] !== 'tool_use') return;
  text(block['id'], `${path}.id`);
  text(block['name'], `${path}.name`);
}

function checkToolEntry(value: unknown, path: string): void {
  const entry = record(value, path);
  if (typeof entry['runnable'] === 'string' || typeof entry['toolset'] === 'string' || entry['source'] === true) return;
  if ('definition' in entry) {
    // A definition the API takes has a `name` (a function or server tool) or a `type` (an MCP toolset has no name).
    const definition = record(entry['definition'], `${path}.definition`);
    if (typeof definition['name'] !== 'string' && typeof definition['type'] !== 'string') fail(`${path}.definition`, 'a tool definition (with a name or a type)', definition);
    return;
  }
  fail(path, '{ runnable }, { definition }, { source: true } or { toolset }', value);
}

function checkUsage(value: unknown, path: string): void {
  const usage = record(value, path);
  count(usage['input_tokens'], `${path}.input_tokens`);
  count(usage['output_tokens'], `${path}.output_tokens`);
  for (const key of ['cache_creation_input_tokens', 'cache_read_input_tokens']) optional(usage, key, path, count);
  optional(usage, 'server_tool_use', path, (server, at) => {
    for (const key of ['web_search_requests', 'web_fetch_requests']) optional(record(server, at), key, at, count);
  });
}

/**
 * (A call waiting for a decision may be one the history no longer makes: the runner forgets such a call at its next
 * answer, and a snapshot taken before holds it.)
 */
function checkCalls(value: unknown, path: string): void {
  const calls = record(value, path);
  // A result kept under its call's id: one under another id would answer the wrong call.
  const result = (value: unknown, at: string, id: string) => {
    const { type, tool_use_id: answers, content, is_error: isError } = record(value, at);
    // Sent as it is: a block of another type, or an `is_error` of no boolean, the API would refuse.
    if (type !== 'tool_result') fail(`${at}.type`, "'tool_result'", type);
    if (answers !== id) fail(`${at}.tool_use_id`, `the id it is kept under (${JSON.stringify(id)})`, answers);
    if (isError !== undefined && typeof isError !== 'boolean') fail(`${at}.is_error`, 'a boolean (or none)', isError);
    // Sent as the call's result: what no tool may return, the API would refuse.
    if (invalidResultKind(content) !== undefined) fail(`${at}.content`, 'a string or content blocks', content);
  };
  for (const [id, settled] of Object.entries(record(calls['settled'], `${path}.settled`))) result(settled, `${path}.settled[${JSON.stringify(id)}]`, id);
  optional(calls, 'ran', path, (ran, at) => {
    for (const [id, kept] of Object.entries(record(ran, at))) result(kept, `${at}[${JSON.stringify(id)}]`, id);
  });
  const held = list(calls['held'], `${path}.held`).map((call, i) => {
    const at = `${path}.held[${i}]`;
    const entry = record(call, at);
    text(entry['name'], `${at}.name`);
    const id = entry['id'];
    const toolUse = record(entry['toolUse'], `${at}.toolUse`);
    if (toolUse['id'] !== id) fail(`${at}.toolUse.id`, `the call's id (${JSON.stringify(id)})`, toolUse['id']);
    // The call as the model made it: its tool's name and its input (an object), which it runs with once decided.
    text(toolUse['name'], `${at}.toolUse.name`);
    record(toolUse['input'], `${at}.toolUse.input`);
    optional(entry, 'agent', at, (agent, inside) => {
      checkSnapshot(record(record(agent, inside)['snapshot'], `${inside}.snapshot`), `${inside}.snapshot`);
      optional(agent as Json, 'counted', inside, checkUsage);
    });
    return text(entry['id'], `${at}.id`);
  });
  list(calls['pending'], `${path}.pending`).forEach((id, i) => {
    if (!held.includes(text(id, `${path}.pending[${i}]`))) fail(`${path}.pending[${i}]`, 'the id of a call in calls.held', id);
  });
  each(calls['decisions'], `${path}.decisions`, (decision, at) => oneOf(record(decision, at)['decision'], { allow: true, deny: true }, `${at}.decision`));
}

function checkToolChanges(value: unknown, path: string): void {
  const changes = record(value, path);
  each(changes['overrides'], `${path}.overrides`, (override, at) => {
    if (override !== null) text(record(override, at)['runnable'], `${at}.runnable`);
  });
  list(changes['pending'], `${path}.pending`).forEach((change, i) => {
    const at = `${path}.pending[${i}]`;
    const entry = record(change, at);
    oneOf(entry['type'], { addition: true, removal: true }, `${at}.type`);
    if (entry['type'] === 'removal') text(entry['name'], `${at}.name`);
    else if (typeof entry['runnable'] !== 'string') text(record(entry['definition'], `${at}.definition`)['name'], `${at}.definition.name`);
  });
}

function checkControl(value: unknown, path: string): void {
  const control = record(value, path);
  optional(control, 'answered', path, (answered, at) => answered === true || fail(at, 'true', answered));
  optional(control, 'output', path, (output, at) => {
    count(record(output, at)['repaired'], `${at}.repaired`);
    optional(output as Json, 'text', at, text);
    optional(output as Json, 'failed', at, list);
  });
  optional(control, 'budget', path, (budget, at) => {
    count(record(budget, at)['toolCalls'], `${at}.toolCalls`);
    each((budget as Json)['perTool'], `${at}.perTool`, count);
    optional(budget as Json, 'overAt', at, count);
  });
  optional(control, 'loopGuard', path, (guard, at) => {
    each(record(guard, at)['seen'], `${at}.seen`, count);
    count((guard as Json)['repeats'], `${at}.repeats`);
  });
  optional(control, 'pending', path, (stop, at) => oneOf(stop, LIMIT_STOPS, at));
  optional(control, 'unread', path, (stop, at) => oneOf(stop, { model: true, ...LIMIT_STOPS }, at));
  optional(control, 'admitted', path, (admitted, at) => {
    count(record(admitted, at)['iteration'], `${at}.iteration`);
    list((admitted as Json)['ids'], `${at}.ids`).forEach((id, i) => text(id, `${at}.ids[${i}]`));
  });
}

function record(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value);
  return value as Json;
}

function list(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, 'an array', value);
  return value;
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string') fail(path, 'a string', value);
  return value;
}

function count(value: unknown, path: string): void {
  if (!Number.isSafeInteger(value) || (value as number) < 0) fail(path, 'a whole number, 0 or more', value);
}

function oneOf(value: unknown, names: Record<string, true>, path: string): void {
  if (typeof value !== 'string' || !Object.hasOwn(names, value)) fail(path, `one of ${Object.keys(names).map((name) => `'${name}'`).join(', ')}`, value);
}

/** An object whose every value passes `check`. */
function each(value: unknown, path: string, check: (value: unknown, path: string) => unknown): void {
  for (const [key, inner] of Object.entries(record(value, path))) check(inner, `${path}[${JSON.stringify(key)}]`);
}

/** `json[key]`, checked when it is there (`undefined` counts as missing, as JSON drops it). */
function optional(json: Json, key: string, path: string, check: (value: unknown, path: string) => unknown): void {
  if (json[key] !== undefined) check(json[key], `${path}.${key}`);
}

function fail(path: string, expected: string, value: unknown): never {
  throw new TypeError(`resumeToolRunner: ${path} must be ${expected}, got ${value === undefined ? 'nothing (it is missing)' : described(value)}`);
}
