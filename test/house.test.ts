/** The shape of the house (docs/architecture.md): small files, and dependencies that point down only. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, importGraph } from '../scripts/import-cycles.js';

const SRC = join(import.meta.dirname, '../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('the house', () => {
  it('no import cycle among the files under src/, type-only imports included', () => {
    const found = cycles(importGraph(SRC)).map((component) => component.map((file) => relative(SRC, file)));
    expect(found).toEqual([]);
  });

  it('the cycle check finds a cycle, type-only imports included', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    const ts = importGraph(join(import.meta.dirname, 'fixtures/cycle'));
    expect(cycles(ts).map((component) => component.map((file) => relative(join(import.meta.dirname, 'fixtures/cycle'), file)))).toEqual([['one.ts', 'two.ts']]);
  });

  it('no file under src/ is over 400 lines', () => {
    const long = sourceFiles(SRC)
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 400);
    expect(long).toEqual([]);
  });
});
