/**
 * The records of the runs an inspector was given, in the order they came: what a page opened late
 * (or reloaded) replays, and what goes out to the open pages and the recorded file, in batches.
 */
import type { InspectorRecord, OtherRecord } from './records.js';

type AnyRecord = InspectorRecord | OtherRecord;

/** Gets each batch of new records: their JSON lines, and the sequence number of the last. */
export type BatchListener = (lines: string[], lastSeq: number) => void;

/** How long records wait to go out together (one write to each page and to the file). */
const BATCH_MS = 50;
/** How many unsent text records a streamed piece of text looks back over for the one it joins. */
const MERGE_LOOK_BACK = 4;

/**
 * Kept in three parallel arrays, not an object per record: a page may be opened late, so up to
 * `maxRuns` runs stay here (400,000 records for 100 runs of 1,000 turns), and the collector marks
 * every object a long-lived process holds on each major collection. An object per record made a
 * watched run's turn cost 13% more than an unwatched one after 60 long runs, against 5% with none kept.
 */
export class RecordStore {
  #seq = 0;
  /** Each kept record's sequence number, in order (records of evicted runs leave gaps). */
  #seqs: number[] = [];
  /** Each kept record's run id. */
  #runOf: string[] = [];
  /** Each kept record: its JSON line once sent (half the memory, one string to mark), the record until then. */
  #items: Array<string | AnyRecord> = [];
  /** The index of the first record not yet sent: the text of a streamed reply gathers in the last of them. */
  #unsentFrom = 0;
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
    this.#seqs.push(++this.#seq);
    this.#runOf.push(record.run);
    this.#items.push(record);
    this.#track(record);
    this.#timer ??= setTimeout(() => this.flush(), BATCH_MS);
    // A process that only waits for the inspector's timer may exit: the timer never keeps it alive.
    this.#timer.unref?.();
  }

  /** Sends what waits now: to every listener, in one batch. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const from = this.#unsentFrom;
    const to = this.#items.length;
    if (from === to) return;
    this.#unsentFrom = to;
    // With no page open and nothing recorded, the JSON waits until a page asks for it.
    if (this.#listeners.size === 0) return;
    const lines: string[] = [];
    for (let i = from; i < to; i++) lines.push(this.#lineAt(i));
    const last = this.#seqs[to - 1]!;
    for (const listener of this.#listeners) listener(lines, last);
  }

  /** The JSON lines of every record after `seq` (all of them for 0), and the last one's number. */
  since(seq: number): { lines: string[]; lastSeq: number } {
    this.flush();
    const lines: string[] = [];
    for (let i = 0; i < this.#items.length; i++) if (this.#seqs[i]! > seq) lines.push(this.#lineAt(i));
    return { lines, lastSeq: this.#seq };
  }

  /** Listens to every batch from now on; returns the function that stops listening. */
  listen(listener: BatchListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #lineAt(i: number): string {
    const item = this.#items[i]!;
    if (typeof item === 'string') return item;
    const line = JSON.stringify(item);
    this.#items[i] = line;
    return line;
  }

  /**
   * A streamed reply's next text joins the unsent record of its previous text. It looks back over the
   * run's last few unsent text records: a streamed sub-agent's text comes twice, as its own
   * `request.text` and as `agent.text` for its parent, one after the other, and two sub-agents of a
   * run may stream at once. Records of another sort in between end the look (they keep their order).
   */
  #mergeText(record: AnyRecord): boolean {
    if (record.type !== 'request.text' && record.type !== 'agent.text') return false;
    const stop = Math.max(this.#unsentFrom, this.#items.length - MERGE_LOOK_BACK);
    for (let i = this.#items.length - 1; i >= stop; i--) {
      // Unsent records are objects still (a record becomes its line only once sent).
      const last = this.#items[i] as AnyRecord;
      if (last.type !== 'request.text' && last.type !== 'agent.text') return false;
      // Another run's text (two runs stream at once): looked past.
      if (last.run !== record.run) continue;
      if (last.type !== record.type || !sameList(last.path, record.path) || !sameList(last.callPath, record.callPath)) continue;
      // The same lane's previous request: the text of this one starts a record of its own.
      if ((last as { requestId?: unknown }).requestId !== (record as { requestId?: unknown }).requestId) return false;
      (last as { text: string }).text += (record as { text: string }).text;
      return true;
    }
    return false;
  }

  /**
   * Keeps at most `maxRuns` runs: past that, the oldest ended runs' records are dropped, as a run
   * starts or ends (more runs at once than `maxRuns` shrink back as they end).
   */
  #track(record: AnyRecord): void {
    if (record.path) return;
    const known = this.#runs.get(record.run);
    if (record.type === 'run.start') {
      if (known) known.ended = false;
      else this.#runs.set(record.run, { ended: false });
    } else if (record.type === 'run.end' && known) {
      known.ended = true;
    } else {
      return;
    }
    if (this.#runs.size > this.#maxRuns) this.#evict();
  }

  #evict(): void {
    const dropped = new Set<string>();
    for (const [run, { ended }] of this.#runs) {
      if (this.#runs.size - dropped.size <= this.#maxRuns) break;
      if (ended) dropped.add(run);
    }
    if (dropped.size === 0) return;
    for (const run of dropped) this.#runs.delete(run);
    // Their last records may not have gone out yet (a batch waits up to 50 ms): they go now, to the pages and the file.
    this.flush();
    this.#drop(dropped);
  }

  /** Drops the records of `runs` in place, keeping the others in order. */
  #drop(runs: Set<string>): void {
    let kept = 0;
    let unsentFrom = this.#unsentFrom;
    const length = this.#items.length;
    for (let i = 0; i < length; i++) {
      if (runs.has(this.#runOf[i]!)) {
        if (i < this.#unsentFrom) unsentFrom--;
        continue;
      }
      this.#seqs[kept] = this.#seqs[i]!;
      this.#runOf[kept] = this.#runOf[i]!;
      this.#items[kept] = this.#items[i]!;
      kept++;
    }
    this.#seqs.length = kept;
    this.#runOf.length = kept;
    this.#items.length = kept;
    this.#unsentFrom = unsentFrom;
  }
}

/** Whether two sub-agent paths (or call paths) are the same; both absent for a run's own records. */
function sameList(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
