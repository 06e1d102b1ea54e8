/**
 * The subpaths that start a server (`testing`, `inspect`) need Node's `node:http` (Node, Bun, Deno).
 * Their package exports are `null` for `workerd`, `worker` and `browser`, which esbuild honours; a
 * bundler that falls through to `import` (Vite, rolldown) stubs `node:http` with an empty module, and
 * the subpath would fail with `createServer is not a function`. This says why instead.
 */
export function needsNodeServer(subpath: string, createServer: unknown): void {
  if (typeof createServer === 'function') return;
  throw new Error(`tool-runner/${subpath} needs Node, Bun or Deno: it starts an HTTP server (node:http), which a browser page or a Worker does not have`);
}
