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
  // Class and function names as written (esbuild renames a class that refers to itself, and stacks then read '_ReplyError'); tsx, which runs the tests and the bench, keeps them too.
  keepNames: true,
  external: ['@anthropic-ai/sdk', 'zod', '@modelcontextprotocol/sdk', '@opentelemetry/api', '@dbos-inc/dbos-sdk'],
});
