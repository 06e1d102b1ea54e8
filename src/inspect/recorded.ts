/**
 * The inspector page over a recorded file (`record`): the same page, its runs as recorded, read
 * again as the file grows. `npx tool-runner inspect FILE` runs it.
 */
import { basename } from 'node:path';
import { RecordedFile } from './recording.js';
import type { InspectorRecord, OtherRecord } from './records.js';
import { wrongValue } from '../described.js';
import { needsNodeServer } from '../needs-node.js';
import { checkPageOptions } from './options.js';
import { type PageSettings, serveInspector } from './server.js';
import { RecordStore } from './store.js';

/** The longest delay a timer keeps. */
const MAX_POLL_MS = 2_147_483_647;

export interface RecordingInspectorOptions {
  /** Default 0: a free port. */
  port?: number | undefined;
  /** Default `127.0.0.1`. */
  host?: string | undefined;
  /** How often to look for new lines, in ms. Default 500. */
  pollMs?: number | undefined;
}

export interface RecordingInspector {
  /** The page's address, with its token. */
  readonly url: string;
  /** Lines of the file that were not records (not JSON, or without `type`, `run` and `time`). */
  readonly skippedLines: number;
  /** Whether the file's last line has no newline and is no whole record: a writer in the middle of it, or a line cut off. */
  readonly unfinishedLine: boolean;
  close(): Promise<void>;
}

/**
 * Serves the inspector page over a recorded file; the file must exist.
 *
 * @example
 * ```ts
 * const page = await inspectRecording('runs.jsonl');
 * console.log(page.url);
 * ```
 */
export async function inspectRecording(path: string, options: RecordingInspectorOptions = {}): Promise<RecordingInspector> {
  // Any function of a `node:` module tells: a page's bundle has them stubbed (the file's reader would fail on `Buffer`).
  needsNodeServer('inspect', basename);
  if (typeof path !== 'string' || path === '') throw new TypeError('inspectRecording: the first argument must be the path of a recorded file');
  checkPageOptions('inspectRecording', options, ['port', 'host', 'pollMs']);
  const { pollMs } = options;
  // A timer of 0 ms or less would read the file without pause.
  if (pollMs !== undefined && (typeof pollMs !== 'number' || !(pollMs >= 1) || pollMs > MAX_POLL_MS)) throw wrongValue(pollMs, `inspectRecording: pollMs must be a number of ms from 1 to ${MAX_POLL_MS}`);
  const file = new RecordedFile(path);
  const store = new RecordStore(Number.MAX_SAFE_INTEGER);
  const settings: PageSettings = { mode: 'recorded', capture: true, title: basename(path) };
  const add = ({ batches, fromStart }: { batches: Array<Array<InspectorRecord | OtherRecord>>; fromStart: boolean }) => {
    // Recorded again, or cut shorter: the runs shown so far are not the file's; the open pages start over.
    if (fromStart) {
      store.clear();
      settings.capture = true;
    }
    for (const records of batches) {
      for (const record of records) {
        // A run recorded without contents: the page says contents are hidden (a page opened from now on).
        if (record.type === 'run.start' && record['captureContent'] === false) settings.capture = false;
        store.add(record);
      }
      // A batch of the store's each (its JSON one string): the records of a file of hundreds of MB read at once were one,
      // past the longest string there can be, and the page that asked for them ended the process.
      store.flush();
    }
  };
  try {
    add(await file.read());
  } catch (error) {
    throw new Error(`inspect: cannot read '${path}': ${(error as Error).message}`, { cause: error });
  }
  const server = await serveInspector({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    store,
    approvals: undefined,
    settings,
  });
  let reading = false;
  const poll = setInterval(() => {
    if (reading) return;
    reading = true;
    file.read().then(
      (records) => {
        reading = false;
        add(records);
      },
      // The file went away or cannot be read for now: the page keeps what it has.
      () => {
        reading = false;
      },
    );
  }, options.pollMs ?? 500);
  poll.unref();
  return {
    url: server.url,
    get skippedLines() {
      return file.skipped;
    },
    get unfinishedLine() {
      return file.unfinishedLine;
    },
    close: async () => {
      clearInterval(poll);
      await server.close();
    },
  };
}
