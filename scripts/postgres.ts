/**
 * A private PostgreSQL for the tests of durable runs: `initdb` into a temp folder, started on
 * 127.0.0.1 on a free port, stopped by its PID. Used by `.ci/run` (CLI) and by the tests'
 * global setup when no database URL is given.
 *
 *   tsx scripts/postgres.ts start   # prints `export TOOL_RUNNER_DATABASE_URL=... TOOL_RUNNER_PG_DIR=...`
 *   tsx scripts/postgres.ts stop    # stops the server in $TOOL_RUNNER_PG_DIR and removes the folder
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunningPostgres {
  url: string;
  dir: string;
}

/** The folder holding `initdb` and `pg_ctl`, or undefined when PostgreSQL is not installed. */
export function postgresBinaries(): string | undefined {
  const candidates = ['/usr/local/bin', '/usr/bin'];
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort().reverse() : [];
  candidates.push(...versions.map((version) => `/usr/lib/postgresql/${version}/bin`));
  return candidates.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/**
 * Starts a new cluster; resolves once it accepts connections. `fast` (for tests) turns off fsync
 * and synchronous commit; leave it off to measure what a durable setup costs.
 */
export async function startPostgres({ fast = true }: { fast?: boolean } = {}): Promise<RunningPostgres | undefined> {
  const bin = postgresBinaries();
  if (!bin) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'tool-runner-pg-'));
  // PostgreSQL refuses to run as root: the cluster belongs to the `postgres` user then.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const run = (command: string, args: string[]) =>
    execFileSync(asRoot ? 'runuser' : join(bin, command), asRoot ? ['-u', 'postgres', '--', join(bin, command), ...args] : args, { stdio: 'pipe' });
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', ...(fast ? ['--no-sync'] : [])]);
  const port = await freePort();
  const settings = `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}${fast ? ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off' : ''}`;
  run('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start']);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir };
}

/** Stops the server by its PID and removes its folder. */
export function stopPostgres(dir: string): void {
  const pidFile = join(dir, 'data', 'postmaster.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    try {
      // SIGINT is PostgreSQL's "fast" shutdown.
      process.kill(pid, 'SIGINT');
    } catch {
      // Already gone.
    }
    const until = Date.now() + 10_000;
    while (existsSync(pidFile) && Date.now() < until) execFileSync('sleep', ['0.1']);
  }
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A new, empty database on the server at `serverUrl` (named `<prefix>_<random>`, so reruns never
 * meet earlier data): its URL, and `drop()` to remove it.
 */
export async function createDatabase(serverUrl: string, prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  const onServer = async (sql: string) => {
    const admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    try {
      await admin.query(sql);
    } finally {
      await admin.end();
    }
  };
  await onServer(`CREATE DATABASE ${name}`);
  return { url: serverUrl.replace(/\/[^/]*$/, `/${name}`), drop: () => onServer(`DROP DATABASE ${name} WITH (FORCE)`) };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const command = process.argv[1]?.endsWith('postgres.ts') ? process.argv[2] : undefined;
if (command === 'start') {
  const pg = await startPostgres();
  if (!pg) {
    console.error('scripts/postgres.ts: no PostgreSQL binaries (initdb, pg_ctl) found');
    process.exit(1);
  }
  console.log(`export TOOL_RUNNER_DATABASE_URL=${pg.url} TOOL_RUNNER_PG_DIR=${pg.dir}`);
} else if (command === 'stop') {
  const dir = process.env.TOOL_RUNNER_PG_DIR;
  if (dir) stopPostgres(dir);
}
