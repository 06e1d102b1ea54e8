/** `createMockServer`'s options and steps, checked at once: a mistake is a clear TypeError, not a script that runs otherwise. */
import { misspeltField, nearNameOr, unknownOption, wrongValue } from '../described.js';

const OPTION_KEYS = ['steps', 'chunkSize', 'eventDelayMs', 'threads', 'contextWindow'];

/** The options, once checked: throws for options no server can take, or a misspelt one (left out silently, the server would run otherwise). */
export function checkServerOptions<Options>(options: Options): Options {
  if (typeof options !== 'object' || options === null) throw new TypeError('createMockServer takes an options object: { steps: [...] }');
  // The steps themselves (a first guess): read as options, a list said "unknown option '0'", an empty one "got undefined".
  if (Array.isArray(options)) throw new TypeError('createMockServer takes an options object, not the steps themselves: createMockServer({ steps: [...] })');
  const slip = misspeltField(options, OPTION_KEYS, nearNameOr('steps'));
  if (slip) throw new TypeError(`createMockServer: unknown option '${slip.key}'. Did you mean '${slip.meant}'?`);
  // Any other would be left out silently (`delayMs`, a step's field): the server would run otherwise than asked.
  const unknown = Object.keys(options).find((key) => !OPTION_KEYS.includes(key));
  if (unknown) throw unknownOption('createMockServer', unknown, OPTION_KEYS);
  const { steps, threads, chunkSize, eventDelayMs, contextWindow } = options as Record<string, unknown>;
  checkSteps('createMockServer', steps);
  // Each would make replies other than the ones scripted (a chunk size of NaN streamed every text as ''), or no limit at all.
  count('chunkSize', chunkSize, 1, 'a whole number of characters, 1 or more');
  count('eventDelayMs', eventDelayMs, 0, 'a whole number of ms, 0 or more');
  count('contextWindow', contextWindow, 1, 'a whole number of tokens, 1 or more');
  if (threads !== undefined && threads !== 'hold' && threads !== 'unsupported') {
    throw new TypeError(`createMockServer: threads must be 'hold' or 'unsupported', got ${JSON.stringify(threads) ?? String(threads)}`);
  }
  return options;
}

function count(name: string, value: unknown, least: number, what: string): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value >= least)) throw wrongValue(value, `createMockServer: ${name} must be ${what}`);
}

/** Steps must be a list (`createMockServer({ steps })`, `setSteps(steps)`). */
export function checkSteps(where: string, steps: unknown): void {
  if (!Array.isArray(steps)) throw new TypeError(`${where}: steps must be an array of steps (replies { content: [...] }, functions of the request, or { error }), got ${steps === null ? 'null' : typeof steps}`);
}
