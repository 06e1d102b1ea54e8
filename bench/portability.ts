/**
 * What running everywhere costs (issue 19): the core's bundle (ESM, minified, the SDK and zod
 * external, as a Worker or a page would bundle it), its import time in Node, and the validation of
 * a plain JSON Schema tool's input, @cfworker/json-schema (this runner's) beside ajv 8 (before).
 * Usage alone: node --import tsx bench/portability.ts [--smoke]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import Ajv from 'ajv';
import { build } from 'esbuild';
import { tool } from '../src/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The figures on main before the change (10bf869, ajv 8), measured on the bench machine on 2026-12-01 with the same commands. */
export const BEFORE = { bundleMinKB: 194.2, bundleGzipKB: 59.8, importMs: 44 };

/** The core bundled as a Worker or a page bundles it: `esbuild src/index.ts --bundle --minify --format=esm --platform=browser --external:@anthropic-ai/sdk --external:zod`. */
export async function bundleSize(): Promise<{ minKB: number; gzipKB: number }> {
  const result = await build({
    entryPoints: [join(root, 'src/index.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    external: ['@anthropic-ai/sdk', 'zod'],
    write: false,
    logLevel: 'error',
  });
  const code = result.outputFiles[0]!.contents;
  return { minKB: code.length / 1024, gzipKB: gzipSync(code, { level: 9 }).length / 1024 };
}

/**
 * Milliseconds to import the core in a fresh Node process, the SDK and zod already loaded (they are
 * the user's either way); the median of `processes`. The core is bundled with its own dependencies
 * (the SDK and zod external), as `dist/` would load them.
 */
export async function importTime(processes: number): Promise<number> {
  const dir = mkdtempSync(join(root, 'node_modules', '.tool-runner-import-'));
  try {
    await build({ entryPoints: [join(root, 'src/index.ts')], bundle: true, format: 'esm', platform: 'node', external: ['@anthropic-ai/sdk', 'zod'], outfile: join(dir, 'core.mjs'), logLevel: 'error' });
    const probe = join(dir, 'probe.mjs');
    writeFileSync(probe, "await import('@anthropic-ai/sdk'); await import('zod'); const t = performance.now(); await import('./core.mjs'); console.log(performance.now() - t);\n");
    const times = Array.from({ length: processes }, () => Number(execFileSync(process.execPath, [probe], { encoding: 'utf8' }).trim()));
    return median(times);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A 10-field object schema, and one valid and one invalid input (three fields wrong). */
const schema = {
  type: 'object',
  properties: {
    id: { type: 'string', pattern: '^A-[0-9]+$' },
    name: { type: 'string', minLength: 1, maxLength: 100 },
    quantity: { type: 'integer', minimum: 1, maximum: 1000 },
    price: { type: 'number', minimum: 0 },
    currency: { enum: ['EUR', 'USD', 'GBP'] },
    express: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 10 },
    address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
    note: { type: ['string', 'null'] },
    priority: { type: 'integer', minimum: 0, maximum: 5, default: 0 },
  },
  required: ['id', 'name', 'quantity', 'price', 'currency'],
  additionalProperties: false,
} as const;
const valid = { id: 'A-17', name: 'Widget', quantity: 3, price: 9.5, currency: 'EUR', express: true, tags: ['blue', 'small'], address: { city: 'Paris', zip: '75001' }, note: null };
const invalid = { id: 'B-17', name: '', quantity: 0, price: 9.5, currency: 'EUR', tags: ['blue'], address: { zip: '75001' } };

/** Microseconds per validation of one call's input, as the runner does it (a copy of the input, defaults, validation, issues). */
export function validationCost(calls: number): Record<'cfworker valid' | 'cfworker invalid' | 'ajv valid' | 'ajv invalid', number> {
  const ours = tool({ name: 'order', inputSchema: schema, run: () => '' }).validateInput!;
  // ajv as the runner ran it before: compiled once with these options, on a copy of the input.
  const check = new Ajv({ allErrors: true, useDefaults: true, strict: false, validateFormats: false }).compile(schema);
  const theirs = (input: unknown) => {
    const value = structuredClone(input);
    return check(value) ? { ok: true, value } : { ok: false, errors: check.errors };
  };
  const time = (validate: (input: unknown) => unknown, input: unknown) => {
    for (let i = 0; i < Math.min(calls, 2000); i++) validate(input);
    const start = performance.now();
    for (let i = 0; i < calls; i++) validate(input);
    return ((performance.now() - start) * 1000) / calls;
  };
  return {
    'cfworker valid': time(ours, valid),
    'cfworker invalid': time(ours, invalid),
    'ajv valid': time(theirs, valid),
    'ajv invalid': time(theirs, invalid),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const smoke = process.argv.includes('--smoke');
  const size = await bundleSize();
  console.log(`core bundle: ${size.minKB.toFixed(1)} KB minified, ${size.gzipKB.toFixed(1)} KB gzipped (before: ${BEFORE.bundleMinKB} KB, ${BEFORE.bundleGzipKB} KB)`);
  console.log(`import in Node: ${(await importTime(smoke ? 1 : 15)).toFixed(1)} ms (before: ${BEFORE.importMs} ms)`);
  for (const [name, us] of Object.entries(validationCost(smoke ? 100 : 50_000))) console.log(`validation, ${name}: ${us.toFixed(2)} µs per call`);
}
