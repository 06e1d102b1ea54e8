/**
 * The recorded file: one JSON line per record, appended as the batches go out (`record`), and read
 * back, as it grows, by `npx tool-runner inspect FILE`.
 */
import { type FileHandle, open, stat } from 'node:fs/promises';
import type { InspectorRecord, OtherRecord } from './records.js';

/** Appends lines to a file, in order; `close()` waits for every line. */
export class Recording {
  readonly #file: FileHandle;
  #writing: Promise<void> = Promise.resolve();
  #failure: unknown;

  private constructor(file: FileHandle) {
    this.#file = file;
  }

  /**
   * Opens (or creates) `path` for appending: a path that cannot be written fails here, not later. A
   * file whose last line was cut off (its writer stopped in the middle) gets its line ended first,
   * so that the first new record is a line of its own.
   */
  static async open(path: string): Promise<Recording> {
    let file: FileHandle | undefined;
    try {
      file = await open(path, 'a+');
      const { size } = await file.stat();
      if (size > 0) {
        const last = Buffer.alloc(1);
        await file.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) await file.appendFile('\n');
      }
      return new Recording(file);
    } catch (error) {
      await file?.close();
      throw new Error(`inspector: cannot record to '${path}': ${(error as Error).message}`, { cause: error });
    }
  }

  /**
   * Appends a batch of lines in one write: a file opened for appending takes each write whole, so
   * several processes (or inspectors) recording to one file do not split each other's lines
   * (`appendFile` writes 512 KiB at a time, between which another writer's lines could come).
   */
  append(lines: readonly string[]): void {
    const bytes = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    this.#writing = this.#writing.then(async () => {
      if (this.#failure !== undefined) return;
      try {
        for (let written = 0; written < bytes.length; ) written += (await this.#file.write(bytes, written, bytes.length - written)).bytesWritten;
      } catch (error) {
        this.#failure = error;
      }
    });
  }

  /** Waits for every line, closes the file; throws if a write failed. */
  async close(): Promise<void> {
    await this.#writing;
    await this.#file.close();
    if (this.#failure !== undefined) throw new Error(`inspector: writing the record failed: ${(this.#failure as Error).message}`, { cause: this.#failure });
  }
}

/** How much of a file's start tells it from another recorded at the same path (the first record's run id is in it). */
const START_BYTES = 64;
/** How much of a recorded file one read takes at a time. */
const READ_BYTES = 16 * 1024 * 1024;

/** Reads a recorded file as it grows: each `read()` returns the records of the lines completed since the last. */
export class RecordedFile {
  readonly #path: string;
  #offset = 0;
  /** The file's first bytes, as read: a new file at the path (its inode may be the old one's) is read from its start. */
  #start = Buffer.alloc(0);
  /** The bytes of a line not yet ended (a writer in the middle of it). */
  #rest = Buffer.alloc(0);
  /** Lines of the file as read now that were not records (not JSON, or no `type`/`run`/`time`). */
  skipped = 0;

  constructor(path: string) {
    this.#path = path;
  }

  /**
   * Whether the last line read has no newline yet and is no whole record (a writer in the middle of it, or a line cut off).
   * Blank space after the last newline is none: as a blank line anywhere, it is no record begun (the rest is one line's start).
   */
  get unfinishedLine(): boolean {
    return this.#unfinished;
  }

  /** Told by `read()`, from the text it read the rest as (a rest of megabytes is not decoded again each time it is asked). */
  #unfinished = false;

  /**
   * The records of the lines completed since the last read, read a chunk at a time (a file of any
   * size: one string of it all could not be made past 512 MB), in `batches`, one per chunk: the store
   * keeps each as one JSON string, which must stay well below that too. A last line without its newline that
   * is a whole record is taken (a file written as lines joined by newlines); no line is the start of another.
   * `fromStart`: the file was read again from its start (another file at the path, or this one cut
   * shorter), so the records read before are not the file's any more.
   */
  async read(): Promise<{ batches: Array<Array<InspectorRecord | OtherRecord>>; fromStart: boolean }> {
    // A pipe (`<(zcat runs.jsonl.gz)`) says size 0, and opening one waits for a writer: it would be served as an empty
    // file, the lines written to it lost unread. Looked at before opening it.
    if (!(await stat(this.#path)).isFile()) throw new Error('not a regular file (a directory, a pipe or a device): save the record to a file and name that file');
    const file = await open(this.#path, 'r');
    try {
      const { size } = await file.stat();
      // Another file at the path now (recorded again), or the same one cut shorter: read it from its start.
      const fromStart = this.#offset > 0 && (size < this.#offset || !(await this.#sameStart(file)));
      if (fromStart) {
        this.#offset = 0;
        this.#rest = Buffer.alloc(0);
        this.skipped = 0;
      }
      const batches: Array<Array<InspectorRecord | OtherRecord>> = [];
      while (this.#offset < size) {
        const chunk = Buffer.alloc(Math.min(READ_BYTES, size - this.#offset));
        const { bytesRead } = await file.read(chunk, 0, chunk.length, this.#offset);
        if (bytesRead === 0) break;
        // A byte order mark (an editor's) before the first line is no part of it.
        const from = this.#offset === 0 && hasByteOrderMark(chunk.subarray(0, bytesRead)) ? BYTE_ORDER_MARK.length : 0;
        if (this.#offset === 0) this.#start = Buffer.from(chunk.subarray(0, Math.min(bytesRead, START_BYTES)));
        this.#offset += bytesRead;
        const read = chunk.subarray(from, bytesRead);
        const bytes = this.#rest.length > 0 ? Buffer.concat([this.#rest, read]) : read;
        const end = bytes.lastIndexOf(0x0a);
        this.#rest = Buffer.from(bytes.subarray(end + 1));
        if (end >= 0) batches.push(this.#parse(bytes.subarray(0, end).toString('utf8')));
      }
      const rest = this.#rest.length > 0 ? this.#rest.toString('utf8') : '';
      const last = rest === '' ? undefined : recordIn(rest);
      if (last) {
        batches.push([last]);
        this.#rest = Buffer.alloc(0);
      }
      this.#unfinished = !last && rest.trim() !== '';
      return { batches: batches.filter((batch) => batch.length > 0), fromStart };
    } finally {
      await file.close();
    }
  }

  /** Whether the file starts as the one read so far did (a file recorded again at the path starts with another run id). */
  async #sameStart(file: FileHandle): Promise<boolean> {
    if (this.#offset === 0) return true;
    const start = Buffer.alloc(this.#start.length);
    const { bytesRead } = await file.read(start, 0, start.length, 0);
    return bytesRead === start.length && start.equals(this.#start);
  }

  /** The records of `text`'s lines, counting the lines that are none. */
  #parse(text: string): Array<InspectorRecord | OtherRecord> {
    const records: Array<InspectorRecord | OtherRecord> = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const record = recordIn(line);
      if (record) records.push(record);
      else this.skipped++;
    }
    return records;
  }
}

/**
 * UTF-8's byte order mark, which some editors write at a file's start. Plain numbers, not a `Buffer` made as the module
 * loads: a page bundled by Vite loads this module (its `node:` imports stubbed) and has no `Buffer`, and "Buffer is not
 * defined" ended its script before `inspector()` could say it needs Node.
 */
const BYTE_ORDER_MARK = [0xef, 0xbb, 0xbf];

function hasByteOrderMark(bytes: Buffer): boolean {
  return bytes.length >= BYTE_ORDER_MARK.length && BYTE_ORDER_MARK.every((byte, i) => bytes[i] === byte);
}

/** The record a line holds, if it is one (JSON with `type`, `run` and `time`, and the fields the page reads in their shapes). */
function recordIn(line: string): OtherRecord | undefined {
  try {
    const record = JSON.parse(line) as Partial<OtherRecord> | null;
    if (record && typeof record.type === 'string' && typeof record.run === 'string' && typeof record.time === 'number' && shaped(record)) return record as OtherRecord;
  } catch {
    // Not JSON: no record.
  }
  return undefined;
}

/**
 * Whether the fields the page reads as lists or objects are those (a file edited by hand, or cut and
 * joined, may hold `"path": "sub"`): a record that would stop the page is skipped like a line that is none.
 */
function shaped(record: Record<string, unknown>): boolean {
  const texts = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item === 'string');
  const calls = (value: unknown) => Array.isArray(value) && value.every((item) => typeof item?.id === 'string' && typeof item?.name === 'string');
  // A run's end lists the calls waiting; a call's end says it waits (`pending: true`).
  const waiting = (value: unknown) => value === true || calls(value);
  const object = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  const text = (value: unknown) => typeof value === 'string';
  const fits: Record<string, (value: unknown) => boolean> = { path: texts, callPath: texts, toolUses: calls, pending: waiting, usage: object, error: object, stoppedBy: text };
  for (const key in fits) if (record[key] !== undefined && !fits[key]!(record[key])) return false;
  return true;
}
