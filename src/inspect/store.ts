/**
 * The records of the runs an inspector was given, in the order they came: what a page opened late
 * (or reloaded) replays, and what goes out to the open pages and the recorded file, in batches.
 */
import type { InspectorRecord, OtherRecord } from './records.js';
import { sameItems } from '../lists.js';

type AnyRecord = InspectorRecord | OtherRecord;

/** One batch of new records, as the pages take it (`json`: one JSON array) and as the file does (`lines`: one each). */
export class Batch {
  #lines: string[] | undefined;
  #json: string | undefined;

  constructor(
    readonly records: readonly AnyRecord[],
    /** The sequence number of the batch's last record: a page that reconnects asks for what came after it. */
    readonly lastSeq: number,
  ) {}

  get lines(): readonly string[] {
    return (this.#lines ??= this.records.map(recordJson));
  }

  /** The records as one JSON array: one `JSON.stringify` for the batch (the lines joined, when the file made them). */
  get json(): string {
    return (this.#json ??= this.#lines ? `[${this.#lines.join(',')}]` : recordsJson(this.records));
  }
}

/** Gets each batch of new records. */
export type BatchListener = (batch: Batch) => void;

/** How long records wait to go out together (one write to each page and to the file). */
const BATCH_MS = 50;
/** How many dropped runs a store remembers, so as not to keep their late records. */
const DROPPED_REMEMBERED = 1_000;
/** The most characters of JSON `since` joins into one message of the feed (a longer batch goes alone). */
const MESSAGE_CHARS = 16 * 1024 * 1024;
/** How many unsent text records a streamed piece of text looks back over for the one it joins. */
const MERGE_LOOK_BACK = 4;

/** The records of one batch, kept: as one JSON array once it went out (or a page asked), as the records until then. */
interface Chunk {
  lastSeq: number;
  /** The runs its records belong to. */
  runs: Set<string>;
  json?: string | undefined;
  records?: AnyRecord[] | undefined;
}

/**
 * Kept as one JSON string per batch, not an object or a string per record: a page may be opened late, so up to
 * `maxRuns` runs stay here (400,000 records for 100 runs of 1,000 turns), and the collector marks every object a
 * long-lived process holds on each major collection. An object per record made a watched run's turn cost 13% more
 * than an unwatched one after 60 long runs, against 5% with none kept. A string per record (a `JSON.stringify` per
 * record, their join for each page) cost the watched process 25 µs a turn with a page open, against 15 µs with one
 * per batch (bench/inspector-own-cost.ts; docs/inspector.md, "Cost").
 */
export class RecordStore {
  #seq = 0;
  /** The batches gone out (or waiting for a page to ask, with none open), in order. */
  #chunks: Chunk[] = [];
  /** The records not yet in a batch: the text of a streamed reply gathers in the last of them. */
  #unsent: AnyRecord[] = [];
  /** Each listener, and whether it takes every record (the file) or only those kept (a page: as one opened later gets them). */
  readonly #listeners = new Map<BatchListener, boolean>();
  /** What to call when every record is forgotten (`clear`): one for each open page. */
  readonly #clearListeners = new Set<() => void>();
  /** The sequence number of the last record forgotten by `clear`: a page that saw no later one shows records no longer here. */
  #clearedAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Each run's state for eviction: whether it ended, in the order the runs started. */
  readonly #runs = new Map<string, { ended: boolean; waiting?: boolean; first: number; end?: number }>();
  readonly #maxRuns: number;
  /**
   * The runs dropped past `maxRuns`, the latest `DROPPED_REMEMBERED` of them: a record of theirs that comes later (a call
   * that ended after its run failed) goes to the file only, and is not kept, where nothing would drop it.
   */
  readonly #dropped = new Set<string>();
  /**
   * The sequence numbers of the first record and the end of each run dropped (the latest `DROPPED_REMEMBERED`), and the
   * latest end of those forgotten: a page that reconnects having seen such a run start but not end (a feed let go past
   * `MAX_UNSENT`, a connection lost) would be sent none of its records, and show it running for ever; it starts over.
   */
  #droppedSpans: Array<{ first: number; end: number }> = [];
  #droppedSpansForgotten = 0;
  /** The unsent records of dropped runs: they go to the file only. */
  readonly #late = new Set<AnyRecord>();

  constructor(maxRuns: number) {
    this.#maxRuns = maxRuns;
  }

  add(record: AnyRecord): void {
    if (this.#mergeText(record)) return;
    this.#seq++;
    this.#unsent.push(record);
    // Told apart as it comes: its run may start again (iterated again) before the batch goes.
    if (this.#dropped.has(record.run) && (record.type !== 'run.start' || record.path)) this.#late.add(record);
    this.#track(record);
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), BATCH_MS);
    // A process that only waits for the inspector's timer may exit: the timer never keeps it alive.
    this.#timer.unref?.();
  }

  /** Sends what waits now, in one batch: to the file every record, to the pages those kept. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const records = this.#unsent;
    if (records.length === 0) return;
    this.#unsent = [];
    const late = this.#late;
    const kept = late.size === 0 ? records : records.filter((record) => !late.has(record));
    late.clear();
    const chunk: Chunk | undefined = kept.length > 0 ? { lastSeq: this.#seq, runs: runsOf(kept), records: kept } : undefined;
    if (chunk) this.#chunks.push(chunk);
    // With no page open and nothing recorded, the JSON waits until a page asks for it.
    if (this.#listeners.size === 0) return;
    const batch = new Batch(records, this.#seq);
    const keptBatch = kept === records ? batch : new Batch(kept, this.#seq);
    for (const [listener, everyRecord] of this.#listeners) {
      if (everyRecord) listener(batch);
      else if (chunk) listener(keptBatch);
    }
    if (chunk) {
      chunk.json = keptBatch.json;
      chunk.records = undefined;
    }
  }

  /**
   * Every record after `seq` (all of them for 0) as JSON arrays (none for no record), each with its last record's number, in
   * order: as few as can be, each of at most `MESSAGE_CHARS` unless one batch is longer. The records of hundreds of MB (a
   * large recorded file, or long runs kept) made one string past the longest V8 can make: the page that asked for them
   * ended the process (RangeError: Invalid string length).
   * `stale`: a page that saw records up to `seq` shows records forgotten since (`clear`), or a run dropped since that it saw
   * start and not end (`#droppedSpans`); it must start over.
   */
  since(seq: number): { messages: Array<{ json: string; lastSeq: number }>; stale: boolean } {
    if (seq > 0 && (seq <= this.#clearedAt || this.#missedDropped(seq))) return { messages: [], stale: true };
    this.flush();
    const messages: Array<{ json: string; lastSeq: number }> = [];
    let arrays: string[] = [];
    let length = 0;
    // The arrays as one: each without its brackets, joined.
    const join = (lastSeq: number) => messages.push({ json: arrays.length === 1 ? arrays[0]! : `[${arrays.map((array) => array.slice(1, -1)).join(',')}]`, lastSeq });
    let last = 0;
    for (const chunk of this.#chunks) {
      if (chunk.lastSeq <= seq) continue;
      chunk.json ??= recordsJson(chunk.records!);
      chunk.records = undefined;
      if (arrays.length > 0 && length + chunk.json.length > MESSAGE_CHARS) {
        join(last);
        arrays = [];
        length = 0;
      }
      arrays.push(chunk.json);
      length += chunk.json.length;
      last = chunk.lastSeq;
    }
    // The last one's number is the store's: records after it that were not kept (a dropped run's) are not asked for again.
    if (arrays.length > 0) join(this.#seq);
    return { messages, stale: false };
  }

  /**
   * Listens to every batch from now on, and to `clear` (`onClear`); returns the function that stops
   * listening to both. `everyRecord`: the records of runs dropped past `maxRuns` that came later too (the file).
   */
  listen(listener: BatchListener, onClear?: () => void, everyRecord = false): () => void {
    this.#listeners.set(listener, everyRecord);
    if (onClear) this.#clearListeners.add(onClear);
    return () => {
      this.#listeners.delete(listener);
      if (onClear) this.#clearListeners.delete(onClear);
    };
  }

  /**
   * Forgets every record (a recorded file read again from its start: recorded again, or cut shorter),
   * and tells each listener's `onClear`. Sequence numbers go on from where they were, so that a page
   * reconnecting with an older one is known to show forgotten records (`since`'s `stale`).
   */
  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#chunks = [];
    this.#unsent = [];
    this.#late.clear();
    this.#runs.clear();
    this.#dropped.clear();
    this.#droppedSpans = [];
    this.#droppedSpansForgotten = 0;
    this.#clearedAt = this.#seq;
    for (const onClear of this.#clearListeners) onClear();
  }

  /**
   * A streamed reply's next text joins the unsent record of its previous text. It looks back over the
   * run's last few unsent text records: a streamed sub-agent's text comes twice, as its own
   * `request.text` and as `agent.text` for its parent, one after the other, and two sub-agents of a
   * run may stream at once. Records of another sort in between end the look (they keep their order).
   */
  #mergeText(record: AnyRecord): boolean {
    if (record.type !== 'request.text' && record.type !== 'agent.text') return false;
    const unsent = this.#unsent;
    const stop = Math.max(0, unsent.length - MERGE_LOOK_BACK);
    for (let i = unsent.length - 1; i >= stop; i--) {
      const last = unsent[i]!;
      if (last.type !== 'request.text' && last.type !== 'agent.text') return false;
      // Another run's text (two runs stream at once): looked past.
      if (last.run !== record.run) continue;
      if (last.type !== record.type || !sameItems(last.path, record.path) || !sameItems(last.callPath, record.callPath)) continue;
      // The same lane's previous request: the text of this one starts a record of its own.
      if ((last as { requestId?: unknown }).requestId !== (record as { requestId?: unknown }).requestId) return false;
      (last as { text: string }).text += (record as { text: string }).text;
      return true;
    }
    return false;
  }

  /**
   * Keeps at most `maxRuns` runs, and as many stopped for approval: past that, the oldest ended runs' records are dropped, as
   * a run starts or ends (more runs at once than `maxRuns` shrink back as they end).
   */
  #track(record: AnyRecord): void {
    if (record.path) return;
    const known = this.#runs.get(record.run);
    if (record.type === 'run.start') {
      // A dropped run iterated again: kept again from its new start.
      this.#dropped.delete(record.run);
      if (known) known.ended = known.waiting = false;
      else this.#runs.set(record.run, { ended: false, first: this.#seq });
    } else if (record.type === 'run.end' && known) {
      known.ended = true;
      known.end = this.#seq;
      known.waiting = record.state === 'waiting';
    } else {
      return;
    }
    if (this.#runs.size > this.#maxRuns) this.#evict();
  }

  #evict(): void {
    const dropped = new Set<string>();
    // Runs stopped for approval count apart (decided, one goes on; one resumed from its snapshot is another run, and
    // the stopped one never ends): at most `maxRuns` of them, beside `maxRuns` others.
    const count = { waiting: 0, other: 0 };
    for (const { waiting } of this.#runs.values()) count[waiting ? 'waiting' : 'other']++;
    for (const [run, { ended, waiting }] of this.#runs) {
      const kind = waiting ? 'waiting' : 'other';
      if (!ended || count[kind] <= this.#maxRuns) continue;
      dropped.add(run);
      count[kind]--;
    }
    if (dropped.size === 0) return;
    for (const run of dropped) {
      const { first, end = this.#seq } = this.#runs.get(run)!;
      this.#droppedSpans.push({ first, end });
      this.#runs.delete(run);
    }
    if (this.#droppedSpans.length > DROPPED_REMEMBERED) {
      for (const { end } of this.#droppedSpans.splice(0, this.#droppedSpans.length - DROPPED_REMEMBERED)) this.#droppedSpansForgotten = Math.max(this.#droppedSpansForgotten, end);
    }
    // Their last records may not have gone out yet (a batch waits up to 50 ms): they go now, to the pages and the file.
    this.flush();
    for (const run of dropped) this.#dropped.add(run);
    for (const run of this.#dropped) {
      if (this.#dropped.size <= DROPPED_REMEMBERED) break;
      this.#dropped.delete(run);
    }
    this.#drop(dropped);
  }

  /** A page that saw records up to `seq` saw a dropped run start and not end (`#droppedSpans`). */
  #missedDropped(seq: number): boolean {
    return seq < this.#droppedSpansForgotten || this.#droppedSpans.some(({ first, end }) => first <= seq && seq < end);
  }

  /**
   * Drops the records of `runs`, keeping the others in order: a batch of those runs only goes; one that holds
   * records of other runs too (runs that went at once) keeps theirs.
   */
  #drop(runs: Set<string>): void {
    const kept: Chunk[] = [];
    for (const chunk of this.#chunks) {
      let some = false;
      let all = true;
      for (const run of chunk.runs) {
        if (runs.has(run)) some = true;
        else all = false;
      }
      if (!some) kept.push(chunk);
      else if (!all) {
        const records = (chunk.records ?? (JSON.parse(chunk.json!) as AnyRecord[])).filter((record) => !runs.has(record.run));
        // Kept as it was: JSON once it went out, the records while none asked for it.
        kept.push({ lastSeq: chunk.lastSeq, runs: runsOf(records), ...(chunk.json === undefined ? { records } : { json: recordsJson(records) }) });
      }
    }
    this.#chunks = kept;
  }
}

function runsOf(records: readonly AnyRecord[]): Set<string> {
  const runs = new Set<string>();
  for (const record of records) runs.add(record.run);
  return runs;
}

/**
 * The records as one JSON array. A value nested deeper than `JSON.stringify` can write (a line of a recorded file of
 * 100,000 brackets: `JSON.parse` reads any depth) threw where the page or the file wanted it (a page's request, the
 * batch timer) and ended the process: its record goes with that field in words.
 */
function recordsJson(records: readonly AnyRecord[]): string {
  try {
    return JSON.stringify(records);
  } catch {
    return `[${records.map(recordJson).join(',')}]`;
  }
}

/** One record as JSON; a field that cannot be written, in words (`recordsJson`). */
function recordJson(record: AnyRecord): string {
  try {
    return JSON.stringify(record);
  } catch {
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      try {
        JSON.stringify(value);
        fields[key] = value;
      } catch (error) {
        fields[key] = `[not JSON: ${(error as Error).message}]`;
      }
    }
    return JSON.stringify(fields);
  }
}
