/**
 * What a user installs for the core loop, bundled: each target's imports (its provider included)
 * through esbuild, minified, for Node, then gzipped. Zod, the tool schema's library in every
 * target, is left out of every bundle: the user's own choice, the same for all.
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { peers } from './peers/index.js';
import { handWritten, ours, sdk } from './targets.js';

const entries: Record<string, string> = {
  [ours.name]: `export { tool, toolRunner } from './src/index.ts'; export { default as Anthropic } from '@anthropic-ai/sdk';`,
  [sdk.name]: `export { default as Anthropic } from '@anthropic-ai/sdk'; export { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';`,
  [handWritten.name]: `export { default as Anthropic } from '@anthropic-ai/sdk';`,
  ...Object.fromEntries(peers.map((peer) => [peer.name, peer.bundle])),
};

/** KB, minified and gzipped, of the targets named (all by default). */
export async function bundleSizes(names = Object.keys(entries)): Promise<Record<string, { minifiedKB: number; gzipKB: number }>> {
  const root = new URL('..', import.meta.url).pathname;
  const sizes: Record<string, { minifiedKB: number; gzipKB: number }> = {};
  for (const name of names) {
    const contents = entries[name];
    if (contents === undefined) throw new Error(`No bundle entry for '${name}'`);
    const result = await build({
      stdin: { contents, resolveDir: root, loader: 'ts' },
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
      external: ['zod', 'zod/*'],
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.contents;
    sizes[name] = { minifiedKB: code.length / 1024, gzipKB: gzipSync(code).length / 1024 };
  }
  return sizes;
}
