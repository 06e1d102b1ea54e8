/** The options `inspector()` and `inspectRecording()` share, checked at once: a mistake is a clear error, not a page served otherwise. */
import { unknownOption, wrongValue } from '../described.js';

/** Throws for what is no options object, an option not in `known` (naming a near miss), or a bad `port` or `host`. */
export function checkPageOptions(label: string, options: unknown, known: readonly string[]): void {
  if (typeof options !== 'object' || options === null) throw new TypeError(`${label}: options must be an object`);
  for (const key of Object.keys(options)) if (!known.includes(key)) throw unknownOption(label, key, known);
  const { port, host } = options as { port?: unknown; host?: unknown };
  if (port !== undefined && (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535)) throw wrongValue(port, `${label}: port must be an integer from 0 to 65535`);
  if (host !== undefined && (typeof host !== 'string' || host === '')) throw new TypeError(`${label}: host must be a non-empty string`);
}
