/** The runner's logging: the client's logger and level (ANTHROPIC_LOG), or `options.logger`. */

/** A pino- or console-like logger. */
export interface Logger {
  debug(message: string, ...rest: unknown[]): void;
  info(message: string, ...rest: unknown[]): void;
  warn(message: string, ...rest: unknown[]): void;
  error(message: string, ...rest: unknown[]): void;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

function parseLevel(value: unknown): LogLevel | undefined {
  return typeof value === 'string' && value in RANK ? (value as LogLevel) : undefined;
}

/** A logger that drops lines below its level, and tells whether a level is on (to skip building a line). */
export class LeveledLogger implements Logger {
  readonly #logger: Logger;
  readonly #rank: number;

  constructor(logger: Logger, level: LogLevel) {
    this.#logger = logger;
    this.#rank = RANK[level];
  }

  enabled(level: Exclude<LogLevel, 'off'>): boolean {
    return RANK[level] >= this.#rank;
  }

  debug(message: string, ...rest: unknown[]): void {
    if (this.enabled('debug')) this.#logger.debug(message, ...rest);
  }

  info(message: string, ...rest: unknown[]): void {
    if (this.enabled('info')) this.#logger.info(message, ...rest);
  }

  warn(message: string, ...rest: unknown[]): void {
    if (this.enabled('warn')) this.#logger.warn(message, ...rest);
  }

  error(message: string, ...rest: unknown[]): void {
    if (this.enabled('error')) this.#logger.error(message, ...rest);
  }
}

/**
 * The logger for a run: `options.logger` or the client's, at the client's `logLevel`
 * (which the SDK reads from `ANTHROPIC_LOG`), else `ANTHROPIC_LOG`, else `warn`.
 */
export function runnerLogger(client: unknown, logger?: Logger): LeveledLogger {
  const fromClient = client as { logger?: Logger; logLevel?: unknown };
  const level = parseLevel(fromClient.logLevel) ?? parseLevel(environment('ANTHROPIC_LOG')) ?? 'warn';
  return new LeveledLogger(logger ?? fromClient.logger ?? console, level);
}

/** A variable of the process's environment where there is one (Node, Bun, Deno); undefined in a browser or a worker. */
function environment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  try {
    return env?.[name];
  } catch {
    // Deno without --allow-env throws on reading the environment.
    return undefined;
  }
}
