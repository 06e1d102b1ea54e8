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

/** A logger that drops lines below `level`. */
export function leveledLogger(logger: Logger, level: LogLevel): Logger {
  const at =
    (name: Exclude<LogLevel, 'off'>) =>
    (message: string, ...rest: unknown[]) => {
      if (RANK[name] >= RANK[level]) logger[name](message, ...rest);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * The logger for a run: `options.logger` or the client's, at the client's `logLevel`
 * (which the SDK reads from `ANTHROPIC_LOG`), else `ANTHROPIC_LOG`, else `warn`.
 */
export function runnerLogger(client: unknown, logger?: Logger): Logger {
  const fromClient = client as { logger?: Logger; logLevel?: unknown };
  const level = parseLevel(fromClient.logLevel) ?? parseLevel(process.env['ANTHROPIC_LOG']) ?? 'warn';
  return leveledLogger(logger ?? fromClient.logger ?? console, level);
}
