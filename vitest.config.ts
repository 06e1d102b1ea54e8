import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^tool-runner\/testing$/, replacement: src('testing/index.ts') },
      { find: /^tool-runner\/mcp$/, replacement: src('mcp/index.ts') },
      { find: /^tool-runner\/otel$/, replacement: src('otel/index.ts') },
      { find: /^tool-runner\/dbos$/, replacement: src('dbos/index.ts') },
      { find: /^tool-runner$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    // Tool failures are logged at warn by design; tests that check logging set their own level.
    env: { ANTHROPIC_LOG: 'off' },
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'] },
  },
});
