#!/usr/bin/env node
/**
 * `npx tool-runner inspect FILE [--port N] [--host H]` (or `--port=N`): serves the inspector page over a file
 * recorded with `inspector({ record: FILE })`, prints its URL on one line, and runs until stopped.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { inspectRecording, type RecordingInspector } from './inspect/recorded.js';
import { meantSaid, misspeltName, oneEditApart, oneSwapApart, plainName, thrownMessage } from './described.js';

/** How often the command looks whether more lines of the file were skipped. */
const REPORT_MS = 1000;

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
  if (command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  // Nothing asked: the usage is the error's message.
  if (command === undefined) {
    process.stderr.write(`${USAGE}\n`);
    return 1;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${version()}\n`);
    return 0;
  }
  if (command !== 'inspect') {
    process.stderr.write(`tool-runner: ${unknownCommand(command)}\n${USAGE}\n`);
    return 1;
  }
  let file: string | undefined;
  let port = 0;
  let host = '127.0.0.1';
  for (let i = 0; i < rest.length; i++) {
    // `--port=8080` as `--port 8080`.
    const joined = /^(--port|--host)=(.*)$/s.exec(rest[i]!);
    const arg = joined ? joined[1]! : rest[i]!;
    const inline = joined?.[2];
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (arg === '--port' || arg === '--host') {
      const value = inline ?? rest[++i];
      if (value === undefined || value === '') return fail(`${arg} needs a value`);
      if (arg === '--host') host = value;
      else if (!/^\d+$/.test(value) || Number(value) > 65535) return fail(`--port must be a number from 0 to 65535, got '${value}'`);
      else port = Number(value);
    } else if (arg.startsWith('-')) {
      return fail(`unknown option '${arg}'${didYouMean(arg, INSPECT_OPTIONS)}`);
    } else if (file === undefined) {
      file = arg;
    } else {
      return fail(`one file at a time (got '${file}' and '${arg}')`);
    }
  }
  if (file === undefined) return fail('name the recorded file');
  let page: RecordingInspector;
  try {
    page = await inspectRecording(file, { port, host });
  } catch (error) {
    // What failed names the function; the user of the command knows it as the command.
    process.stderr.write(`tool-runner inspect: ${(error as Error).message.replace(/^inspect(Recording)?: /, '')}\n`);
    return 1;
  }
  process.stdout.write(`${page.url}\n`);
  const report = watchLines(page, file);
  const stop = () => {
    clearInterval(report);
    void page.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // The server keeps the process alive until a signal stops it.
  return -1;
}

/**
 * Says on stderr how many lines of the file are no records, now and each time more are (the file grows
 * as it is served), and when its last line stays unfinished: a writer stopped in the middle of it.
 */
function watchLines(page: RecordingInspector, file: string): ReturnType<typeof setInterval> {
  let skipped = 0;
  let unfinished = false;
  const check = () => {
    if (page.skippedLines !== skipped) {
      // Fewer: the file was recorded again (or cut shorter), and its lines counted from its start.
      if (page.skippedLines > 0) process.stderr.write(`tool-runner inspect: ${page.skippedLines} line(s) of ${file} are not records and were skipped\n`);
      skipped = page.skippedLines;
    }
    if (page.unfinishedLine !== unfinished) {
      unfinished = page.unfinishedLine;
      if (unfinished) process.stderr.write(`tool-runner inspect: the last line of ${file} is not finished (a writer in the middle of it, or one stopped); it shows once it ends\n`);
    }
  };
  check();
  const timer = setInterval(check, REPORT_MS);
  timer.unref();
  return timer;
}

/** The options of `inspect`, and of the command alone: a misspelt one is answered with the one meant. */
const INSPECT_OPTIONS = ['--port', '--host', '--help'];
const COMMAND_OPTIONS = ['--version', '--help'];

/** What a first argument that is no command was meant to be, when that can be told: a command, an option, a file to inspect. */
function unknownCommand(command: string): string {
  if (!command.startsWith('-')) {
    // `tool-runner runs.jsonl`: the command left out before a file. Told first: a file named after the command
    // (`inspector.jsonl`, as `inspector({ record })` suggests) is no misspelt `inspect`.
    if (/[./\\]/.test(command)) return `unknown command '${command}'. To serve a recorded file: tool-runner inspect ${command}`;
    return `unknown command '${command}'${didYouMean(command, ['inspect'])}`;
  }
  const meant = didYouMean(command, COMMAND_OPTIONS);
  if (meant) return `unknown option '${command}'${meant}`;
  const ofInspect = misspelt(command, INSPECT_OPTIONS);
  return `unknown option '${command}'${ofInspect ? `. ${ofInspect} is an option of inspect, after the command: tool-runner inspect FILE ${ofInspect} …` : ''}`;
}

/**
 * ". Did you mean 'x'?" for a name one slip from one of `known` (`--prot`, `--hots`, `inspct`), its start or more of it
 * (`--hos`, `inspector`), or its first letter (`-p`).
 */
function didYouMean(given: string, known: readonly string[]): string {
  return meantSaid(misspelt(given, known));
}

/** The name of `known` that `given` misspells, compared without dashes, case and any `=value` (`--prot=8080`, `--Port`). */
function misspelt(given: string, known: readonly string[]): string | undefined {
  // A one-letter flag (`-p`): the one option it starts.
  if (/^-[^-]$/.test(given)) {
    const starting = known.filter((name) => plainName(name).startsWith(plainName(given)));
    return starting.length === 1 ? starting[0] : undefined;
  }
  return misspeltName(given.replace(/=.*$/s, ''), known, (a, b) => {
    const [shorter, longer] = a.length <= b.length ? [a, b] : [b, a];
    return oneEditApart(a, b) || oneSwapApart(a, b) || (shorter.length >= 3 && longer.startsWith(shorter));
  });
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
    process.stderr.write(`tool-runner: ${thrownMessage(error)}\n`);
    process.exitCode = 1;
  },
);
