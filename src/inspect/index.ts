/**
 * tool-runner/inspect: a local web page of the runs it is given — each request, the streamed text,
 * each tool call, approvals decided from the page, usage, sub-agents — live, and the same page
 * over a recorded file (`npx tool-runner inspect runs.jsonl`). It listens to the runner's lifecycle
 * events (`options.onEvent`) and answers `options.approve`; the core knows nothing of it.
 */
import { randomBytes } from 'node:crypto';
import { wrongValue } from '../described.js';
import { needsNodeServer } from '../needs-node.js';
import { type Approver, EDITABLE_INPUT, askingRunner } from '../approval.js';
import { type RunnerEvent, type RunnerListener, callersOf } from '../events.js';
import { textOf } from '../text.js';
import type { Runner } from '../surface.js';
import type { AnyCall, BetaToolUseBlock } from '../types.js';
import { PageApprovals } from './approvals.js';
import { type CallWhere, type InspectorRecord, type OtherRecord, promptOf, recordOf } from './records.js';
import { Recording } from './recording.js';
import { checkPageOptions } from './options.js';
import { serveInspector } from './server.js';
import { RecordStore } from './store.js';

export type { ErrorInfo, InspectorRecord, OtherRecord, RecordBase, RecordedUsage } from './records.js';
export { type RecordingInspector, type RecordingInspectorOptions, inspectRecording } from './recorded.js';

export interface InspectorOptions {
  /** The port to listen on. Default 0: a free port (read `url`). */
  port?: number | undefined;
  /** The address to bind. Default `127.0.0.1`: only this machine can open the page. */
  host?: string | undefined;
  /** A file to append every event to, one JSON line each (see `npx tool-runner inspect FILE`). */
  record?: string | undefined;
  /**
   * Keep and show tool inputs and results, the model's text and the prompt. Default: true when the
   * page is bound to loopback, false otherwise (they may hold personal data).
   */
  captureContent?: boolean | undefined;
  /** The most runs kept in memory (and as many stopped for approval, apart): past it the oldest ended one is dropped. Default 100. */
  maxRuns?: number | undefined;
}

export interface Inspector {
  /** The page's address, with its token: requests without the token get 403. */
  readonly url: string;
  /** Pass as `options.onEvent` (or in an array beside other listeners). */
  readonly onEvent: RunnerListener;
  /** Pass as `options.approve` to decide approvals from the page (Allow / Deny / edit input). */
  readonly approve: Approver<any>;
  /**
   * Denies the calls still waiting for a decision (and any asked later), writes the rest of the
   * record, and stops the server. Events after it are not kept.
   */
  close(): Promise<void>;
}

/**
 * Serves the inspector page on 127.0.0.1 (a free port unless `port` is given).
 *
 * @example
 * ```ts
 * const inspect = await inspector({ record: 'runs.jsonl' });
 * console.log(`inspector: ${inspect.url}`);
 * await toolRunner(client, params, { onEvent: inspect.onEvent, approve: inspect.approve });
 * await inspect.close();
 * ```
 */
export async function inspector(options: InspectorOptions = {}): Promise<Inspector> {
  needsNodeServer('inspect', randomBytes);
  const { port = 0, host = '127.0.0.1', maxRuns = 100 } = checkOptions(options);
  const capture = options.captureContent ?? isLoopback(host);
  const recording = options.record === undefined ? undefined : await Recording.open(options.record);
  const store = new RecordStore(maxRuns);
  if (recording) store.listen((batch) => recording.append(batch.lines), undefined, true);
  const approvals = new PageApprovals((record) => store.add(record));
  const runs = new Runs(store, capture, (run, id) => approvals.waitsIn(run, id));
  let server;
  try {
    server = await serveInspector({ port, host, store, approvals, settings: { mode: 'live', capture, title: 'tool-runner inspector', maxRuns } });
  } catch (error) {
    await recording?.close();
    throw error;
  }

  let closed: Promise<void> | undefined;
  let keeping = true;
  const approve: Approver<AnyCall> = (call, context) => {
    const where = runs.callOf(call.toolUse, askingRunner(call));
    // A sub-agent's call whose events this inspector does not see: its path as the approver is told it.
    const { path, callPath } = call as { path?: unknown; callPath?: unknown };
    const ids = Array.isArray(path) && Array.isArray(callPath) && callPath.length === path.length ? { callPath: callPath.map(String) } : undefined;
    const shown = where.path || !Array.isArray(path) || path.length === 0 ? where : { run: where.run, path: path.map(String), ...ids };
    // The input as an edit is validated, which the page shows and its editor starts from: the onToolCall hook's if it gave
    // one, else the model's; not the tool's (after the schema's transforms), which may not even be JSON.
    const editable = EDITABLE_INPUT in call ? call[EDITABLE_INPUT] : call.toolUse.input;
    return approvals.ask(shown, call.toolUse.id, call.name, capture ? editable : undefined, context?.signal);
  };
  return {
    url: server.url,
    // After close() nothing is kept or written (the file is closed).
    onEvent: (event) => {
      if (keeping) runs.take(event);
    },
    approve,
    close: () =>
      (closed ??= (async () => {
        approvals.closeAll();
        // The calls denied just now end within a turn of the event loop: their records go out with the rest.
        await new Promise((resolve) => setImmediate(resolve));
        keeping = false;
        store.flush();
        await server.close();
        await recording?.close();
      })()),
  };
}

/** Which run each event belongs to, and the record it becomes. */
class Runs {
  readonly #store: RecordStore;
  readonly #capture: boolean;
  readonly #prefix = randomBytes(3).toString('hex');
  #count = 0;
  readonly #ids = new WeakMap<Runner, string>();
  /**
   * The calls started and not yet answered, by tool_use id, oldest first (one id may be a call of two runs, resumed
   * from one snapshot): their run and sub-agent path, for `approve`, and the running calls an unknown runner's
   * sub-agent events belong to.
   */
  readonly #open = new Map<string, OpenCall[]>();
  /** What each runner's history ended with at its last prompt recorded, or when it last stopped (`#historyEnd`). */
  readonly #prompted = new WeakMap<Runner, string>();
  /** The run approvals asked without `onEvent` are shown in, and how many it holds. */
  #unattributed: { run: string; asked: number } | undefined;

  /** Whether a call of this run (of this id, when given) still waits for a page's decision. */
  readonly #waitsIn: (run: string, id?: string) => boolean;

  constructor(store: RecordStore, capture: boolean, waitsIn: (run: string, id?: string) => boolean) {
    this.#store = store;
    this.#capture = capture;
    this.#waitsIn = waitsIn;
  }

  take(event: RunnerEvent): void {
    const { runner } = event;
    let run = this.#ids.get(runner);
    const first = run === undefined;
    if (run === undefined) this.#ids.set(runner, (run = this.#runFor(event)));
    const record = recordOf(event, run, Date.now(), this.#capture);
    if (!record) return;
    if (record.type === 'run.start' && !record.path) {
      const prompt = this.#newPrompt(runner);
      if (prompt !== undefined) record.prompt = prompt;
      if (first && !this.#capture) record.captureContent = false;
    }
    // What the history ends with when the run stops: a message the run itself added last (its output's repair prompt, a
    // compaction's summary) is no prompt of the next start, which goes on from it (iterated again after a failed request).
    if (record.type === 'run.end' && this.#capture) this.#prompted.set(runner, this.#historyEnd(runner));
    this.#follow(event, record);
    this.#store.add(record);
  }

  /**
   * The prompt of a run's start: at its first, and at a later one whose history ends with a user message it did not end
   * with when the run last stopped (a chat's next message, pushed while the run was stopped for approval or at a limit):
   * the page showed the answer to a message it never showed. Iterated again on the same history (after a failed
   * request, say), none.
   */
  #newPrompt(runner: Runner): string | undefined {
    const prompt = this.#capture ? promptOf(runner) : undefined;
    if (prompt === undefined) return undefined;
    const end = this.#historyEnd(runner);
    if (this.#prompted.get(runner) === end) return undefined;
    this.#prompted.set(runner, end);
    return prompt;
  }

  /**
   * What a runner's history ends with, as a new prompt is told from one seen: how many user messages hold text (the
   * calls a pushed message went past get their results before it), and the last message's prompt, if it is one.
   */
  #historyEnd(runner: Runner): string {
    const asked = runner.params.messages.filter((message) => message.role === 'user' && textOf(message) !== '').length;
    return `${asked}\u0000${promptOf(runner) ?? ''}`;
  }

  /**
   * The run and path of a call seen in a `tool.start`: of the run of `runner` (the runner that asks), when it is known;
   * its run alone once the call is no longer open (the run ended); an `approve` without `onEvent`: a run of its own.
   */
  callOf(toolUse: BetaToolUseBlock, runner: object | undefined): CallWhere {
    const run = runner && this.#ids.get(runner as Runner);
    const open = this.#open.get(toolUse.id);
    // A runner this inspector hears no events of (no onEvent) has no open call here, whatever its id; one that does not
    // say (a runner of an older version): the newest call of that id.
    const known = run !== undefined ? open?.find((call) => call.where.run === run) : runner === undefined ? open?.at(-1) : undefined;
    if (known) return known.where;
    return { run: run ?? this.#unattributedRun(toolUse.id) };
  }

  /**
   * A run of its own for approvals asked without `onEvent`, a new one every `UNATTRIBUTED_PER_RUN` (the last one ended):
   * `maxRuns` then bounds what a long-lived inspector keeps of them, as it does runs.
   */
  #unattributedRun(id: string): string {
    let current = this.#unattributed;
    // Ended (and so ready to be dropped past `maxRuns`) only once none of its calls waits: a waiting call stays on the page.
    if (current && current.asked >= UNATTRIBUTED_PER_RUN && !this.#waitsIn(current.run)) {
      this.#store.add({ run: current.run, time: Date.now(), type: 'run.end', state: 'finished' });
      current = undefined;
    }
    // A call of this id waits there already (two runners' calls of one id): a new run, so that each can be decided.
    if (current && this.#waitsIn(current.run, id)) current = undefined;
    current ??= this.#unattributed = { run: this.#start('approvals asked without onEvent'), asked: 0 };
    current.asked++;
    return current.run;
  }

  /** A runner not seen before: a run of its own, or, for a sub-agent's event, the run of the call that started it. */
  #runFor(event: RunnerEvent): string {
    const { path, callPath } = event;
    // The run whose call started the outermost sub-agent: by that call's runner, when the event names it (an id alone may be
    // a call of two runs, resumed from one snapshot), else by the call's id.
    const caller = callersOf(event)?.[0];
    const known = caller && this.#ids.get(caller);
    if (known) return known;
    const started = callPath?.[0] === undefined ? undefined : this.#open.get(callPath[0])?.at(-1);
    if (started) return started.where.run;
    if (Array.isArray(path) && path.length > 0) {
      // An event without the call's id (a runner of an older version): the newest open call of that name.
      let named: string | undefined;
      let newest: string | undefined;
      for (const { where, name } of [...this.#open.values()].flat()) {
        if (where.path) continue;
        newest = where.run;
        if (name === String(path[0])) named = where.run;
      }
      if (named ?? newest) return (named ?? newest)!;
    }
    return `${this.#prefix}-${++this.#count}`;
  }

  #follow(event: RunnerEvent, record: InspectorRecord | OtherRecord): void {
    if (event.type === 'tool.start') {
      const { run, path, callPath } = record;
      const others = this.#openBesides(event.call.id, run);
      this.#open.set(event.call.id, [...others, { where: { run, ...(path && { path }), ...(callPath && { callPath }) }, name: event.call.name }]);
    } else if (event.type === 'tool.end') {
      // (The call of another run with the same id, resumed from one history, stays open.)
      if (!event.pending) this.#close(event.call.id, record.run);
    } else if (event.type === 'run.end' && !record.path) {
      // Calls a run left unanswered (waiting for approval, aborted, a thrown hook) are open no more.
      for (const id of [...this.#open.keys()]) this.#close(id, record.run);
    }
  }

  /** The open calls of this id but the one of `run`. */
  #openBesides(id: string, run: string): OpenCall[] {
    return (this.#open.get(id) ?? []).filter((call) => call.where.run !== run);
  }

  #close(id: string, run: string): void {
    const others = this.#openBesides(id, run);
    if (others.length > 0) this.#open.set(id, others);
    else this.#open.delete(id);
  }

  #start(note: string): string {
    const run = `${this.#prefix}-${++this.#count}`;
    this.#store.add({ run, time: Date.now(), type: 'run.start', model: note });
    return run;
  }
}

/** A call started and not yet answered: its run and sub-agent path, and its tool's name. */
interface OpenCall {
  where: CallWhere;
  name: string;
}

/** How many approvals asked without `onEvent` one run of the page shows. */
const UNATTRIBUTED_PER_RUN = 100;

function checkOptions(options: InspectorOptions): InspectorOptions {
  checkPageOptions('inspector', options, ['port', 'host', 'record', 'captureContent', 'maxRuns']);
  const { record, maxRuns, captureContent } = options;
  if (record !== undefined && (typeof record !== 'string' || record === '')) throw new TypeError('inspector: record must be a file path');
  if (captureContent !== undefined && typeof captureContent !== 'boolean') throw new TypeError(`inspector: captureContent must be true or false, got ${JSON.stringify(captureContent)}`);
  if (maxRuns !== undefined && (!Number.isInteger(maxRuns) || maxRuns < 1)) throw wrongValue(maxRuns, 'inspector: maxRuns must be a positive integer');
  return options;
}

/** Whether `host` is a loopback address (only this machine reaches it). */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
