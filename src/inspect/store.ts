/**
 * The records of the runs an inspector was given, in the order they came: what a page opened late
 * (or reloaded) replays, and what goes out to the open pages and the recorded file, in batches.
 */
import type { InspectorRecord, OtherRecord } from './records.js';

type AnyRecord = InspectorRecord | OtherRecord;

/**
 * A record with its place in the sequence. Once sent it keeps only its JSON (half the memory, and
 * one string for the collector to mark instead of an object and its fields).
 */
interface Entry {
  seq: number;
  run: string;
  record: AnyRecord | undefined;
  line: string | undefined;
}

/** Gets each batch of new records: their JSON lines, and the sequence number of the last. */
export type BatchListener = (lines: string[], lastSeq: number) => void;

/** How long records wait to go out together (one write to each page and to the file). */
const BATCH_MS = 50;

export class RecordStore {
  #seq = 0;
  #entries: Entry[] = [];
  /** Records not yet sent: the text of a streamed reply gathers in the last of them. */
  #unsent: Entry[] = [];
  readonly #listeners = new Set<BatchListener>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Each run's state for eviction: whether it ended, in the order the runs started. */
  readonly #runs = new Map<string, { ended: boolean }>();
  readonly #maxRuns: number;

  constructor(maxRuns: number) {
    this.#maxRuns = maxRuns;
  }

  add(record: AnyRecord): void {
    if (this.#mergeText(record)) return;
    const entry: Entry = { seq: ++this.#seq, run: record.run, record, line: undefined };
    this.#entries.push(entry);
    this.#unsent.push(entry);
    this.#track(record);
    this.#timer ??= setTimeout(() => this.flush(), BATCH_MS);
    // A process that only waits for the inspector's timer may exit: the timer never keeps it alive.
    this.#timer.unref?.();
  }

  /** Sends what waits now: to every listener, in one batch. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#unsent.length === 0) return;
    const batch = this.#unsent;
    this.#unsent = [];
    // With no page open and nothing recorded, the JSON waits until a page asks for it.
    if (this.#listeners.size === 0) return;
    const lines = batch.map(lineOf);
    const last = batch[batch.length - 1]!.seq;
    for (const listener of this.#listeners) listener(lines, last);
  }

  /** The JSON lines of every record after `seq` (all of them for 0), and the last one's number. */
  since(seq: number): { lines: string[]; lastSeq: number } {
    this.flush();
    const lines: string[] = [];
    for (const entry of this.#entries) if (entry.seq > seq) lines.push(lineOf(entry));
    return { lines, lastSeq: this.#seq };
  }

  /** Listens to every batch from now on; returns the function that stops listening. */
  listen(listener: BatchListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A streamed reply's next text joins the unsent record of its previous text, if that is the last one. */
  #mergeText(record: AnyRecord): boolean {
    if (record.type !== 'request.text' && record.type !== 'agent.text') return false;
    const unsent = this.#unsent[this.#unsent.length - 1];
    const last = unsent?.line === undefined ? unsent?.record : undefined;
    if (!last || last.type !== record.type || last.run !== record.run || String(last.path) !== String(record.path)) return false;
    if ((last as { requestId?: unknown }).requestId !== (record as { requestId?: unknown }).requestId) return false;
    (last as { text: string }).text += (record as { text: string }).text;
    return true;
  }

  /** Keeps at most `maxRuns` runs: past that, the oldest ended run's records are dropped. */
  #track(record: AnyRecord): void {
    if (record.path) return;
    const known = this.#runs.get(record.run);
    if (record.type === 'run.start') {
      if (known) known.ended = false;
      else this.#runs.set(record.run, { ended: false });
      if (this.#runs.size > this.#maxRuns) this.#evict();
    } else if (record.type === 'run.end' && known) {
      known.ended = true;
    }
  }

  #evict(): void {
    for (const [run, { ended }] of this.#runs) {
      if (!ended) continue;
      this.#runs.delete(run);
      this.#entries = this.#entries.filter((entry) => entry.run !== run);
      return;
    }
  }
}

function lineOf(entry: Entry): string {
  if (entry.line === undefined) {
    entry.line = JSON.stringify(entry.record);
    entry.record = undefined;
  }
  return entry.line;
}
