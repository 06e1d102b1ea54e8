import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

/**
 * What `npm run test:quick` (`vitest run --mode quick`) leaves out: the files that take many seconds
 * each (measured with vitest's durations), the durable ones that need PostgreSQL, and the one that
 * checks `dist/`, which only `npm test` rebuilds. `npm test` runs them all.
 */
const slowOrBuilt = [
  'test/pack.test.ts', // a fresh clone packed and installed twice: about a minute
  'test/reliability.test.ts', // random runs with faults, and the short soak: about 30 s
  'test/agents-chaos.test.ts', // random runs with sub-agents and faults at both levels: about 12 s
  'test/history-fuzz.test.ts', // the history fuzzer's fixed seeds: about 20 s
  'test/wire-fuzz.test.ts', // the wire fuzzer's fixed seeds: about 15 s
  'test/examples.test.ts', // every example in a process of its own, the durable one on PostgreSQL
  'test/dbos.test.ts', // durable workers killed mid-run, on PostgreSQL
  'test/dbos-replay.test.ts', // durable runs replayed from their record, on PostgreSQL
  'test/dbos-mcp.test.ts', // durable workers with an MCP server's tools and nested sub-agents killed mid-run, on PostgreSQL
  'test/bench.test.ts', // every bench scenario at smoke sizes
  'test/package.test.ts', // the built dist/ as ESM and CJS
  'test/quickstart.test.ts', // the README's quick start on the built dist/
  'test/runtimes.test.ts', // the built dist/ in Node, Bun, Deno, workerd and Chromium
  'test/runtimes-features.test.ts', // the same, with approvals, aborts, timeouts, resume, output, budget, errors
  'test/run-control-resume.test.ts', // a snapshot at each kind of stop resumed in a process of its own: about 12 s
  'test/control-fuzz.test.ts', // the control API at random moments over 41 seeded runs: about 10 s
];

export default defineConfig(({ mode }) => {
  const quick = mode === 'quick';
  return {
    resolve: {
      alias: [
        { find: /^tool-runner\/testing$/, replacement: src('testing/index.ts') },
        { find: /^tool-runner\/mcp$/, replacement: src('mcp/index.ts') },
        { find: /^tool-runner\/otel$/, replacement: src('otel/index.ts') },
        { find: /^tool-runner\/dbos$/, replacement: src('dbos/index.ts') },
        { find: /^tool-runner\/inspect$/, replacement: src('inspect/index.ts') },
        { find: /^tool-runner$/, replacement: src('index.ts') },
      ],
    },
    test: {
      include: ['test/**/*.test.ts'],
      exclude: quick ? [...configDefaults.exclude, ...slowOrBuilt] : configDefaults.exclude,
      // PostgreSQL is only for the durable tests, which the quick run leaves out.
      globalSetup: quick ? [] : ['test/global-setup.ts'],
      testTimeout: 20_000,
      // Tool failures are logged at warn by design; tests that check logging set their own level.
      env: { ANTHROPIC_LOG: 'off' },
      typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
    },
  };
});
