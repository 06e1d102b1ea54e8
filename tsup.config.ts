import { rmSync, readFileSync } from 'node:fs';
import { type Options, defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

// The two builds below run at once: neither may clean the folder the other writes to.
rmSync('dist', { recursive: true, force: true });

const shared: Options = {
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'mcp/index': 'src/mcp/index.ts',
    'otel/index': 'src/otel/index.ts',
    'dbos/index': 'src/dbos/index.ts',
    'inspect/index': 'src/inspect/index.ts',
    cli: 'src/cli.ts',
  },
  dts: true,
  sourcemap: true,
  target: 'node20',
  // The CLI's --version, whatever path the script is started from.
  define: { __TOOL_RUNNER_VERSION__: JSON.stringify(version) },
  external: ['@anthropic-ai/sdk', 'zod', '@modelcontextprotocol/sdk', '@opentelemetry/api', '@dbos-inc/dbos-sdk'],
};

export default defineConfig([
  // ESM: the entries share chunks, so a program has one copy of the runner whatever entries it imports.
  { ...shared, format: 'esm', splitting: true },
  // CommonJS: each entry whole. tsup's CommonJS splitting is experimental and rewrote
  // `this.#toolsetsOf = tools` into an assignment to the exported `toolsetsOf` (docs/architecture.md);
  // what entries exchange across copies is keyed by registered symbols (agent-link.ts).
  { ...shared, format: 'cjs', splitting: false },
]);
