import { defineConfig } from 'tsup';

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
  external: ['@anthropic-ai/sdk', 'zod', '@modelcontextprotocol/sdk', '@opentelemetry/api', '@dbos-inc/dbos-sdk'],
});
