import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';

const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    'mcp/index': 'src/mcp/index.ts',
    'otel/index': 'src/otel/index.ts',
    'dbos/index': 'src/dbos/index.ts',
    'inspect/index': 'src/inspect/index.ts',
    cli: 'src/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  sourcemap: true,
  target: 'node20',
  splitting: true,
  // The CLI's --version, whatever path the script is started from.
  define: { __TOOL_RUNNER_VERSION__: JSON.stringify(version) },
  external: ['@anthropic-ai/sdk', 'zod', '@modelcontextprotocol/sdk', '@opentelemetry/api', '@dbos-inc/dbos-sdk'],
});
