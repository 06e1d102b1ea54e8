#!/usr/bin/env node
/**
 * `npx tool-runner inspect FILE [--port N] [--host H]`: serves the inspector page over a file
 * recorded with `inspector({ record: FILE })`, prints its URL on one line, and runs until stopped.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { inspectRecording } from './inspect/recorded.js';

const USAGE =
  'Usage: tool-runner inspect FILE [--port N] [--host H]\n  Serves the inspector page over FILE (recorded with inspector({ record: FILE })) until stopped.\n       tool-runner --version';

/** Set by the build (tsup.config.ts's `define`); undefined when the source runs under tsx. */
declare const __TOOL_RUNNER_VERSION__: string | undefined;

/** The package's version: the build's, else from the package.json beside this script's folder. */
function version(): string {
  if (typeof __TOOL_RUNNER_VERSION__ === 'string') return __TOOL_RUNNER_VERSION__;
  const script = realpathSync(process.argv[1]!);
  return (JSON.parse(readFileSync(join(dirname(script), '..', 'package.json'), 'utf8')) as { version: string }).version;
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === '--help' || command === '-h' || command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 1 : 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command !== 'inspect') {
    process.stderr.write(`tool-runner: unknown command '${command}'\n${USAGE}\n`);
    return 1;
  }
  let file: string | undefined;
  let port = 0;
  let host = '127.0.0.1';
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (arg === '--port' || arg === '--host') {
      const value = rest[++i];
      if (value === undefined) return fail(`${arg} needs a value`);
      if (arg === '--host') host = value;
      else if (!/^\d+$/.test(value) || Number(value) > 65535) return fail(`--port must be a number from 0 to 65535, got '${value}'`);
      else port = Number(value);
    } else if (arg.startsWith('-')) {
      return fail(`unknown option '${arg}'`);
    } else if (file === undefined) {
      file = arg;
    } else {
      return fail(`one file at a time (got '${file}' and '${arg}')`);
    }
  }
  if (file === undefined) return fail('name the recorded file');
  const page = await inspectRecording(file, { port, host });
  process.stdout.write(`${page.url}\n`);
  if (page.skippedLines > 0) process.stderr.write(`tool-runner inspect: ${page.skippedLines} line(s) of ${file} are not records and were skipped\n`);
  const stop = () => void page.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The server keeps the process alive until a signal stops it.
  return -1;
}

function fail(message: string): number {
  process.stderr.write(`tool-runner inspect: ${message}\n${USAGE}\n`);
  return 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`tool-runner: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
