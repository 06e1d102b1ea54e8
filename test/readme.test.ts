/**
 * Every README code block marked `<!-- example: path -->` is taken verbatim from that example file; the span attributes it
 * names are the ones the spans have.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const readme = readFileSync('README.md', 'utf8');
const blocks = [...readme.matchAll(/<!-- example: (\S+) -->\n```ts\n([\s\S]*?)```/g)].map((match) => ({
  file: match[1]!,
  code: match[2]!,
}));

describe('README code comes from the examples the tests run', () => {
  it('has example blocks', () => expect(blocks.length).toBeGreaterThanOrEqual(9));
  for (const { file, code } of blocks) {
    it(`${file}: ${code.split('\n')[0]}`, () => {
      expect(readFileSync(file, 'utf8')).toContain(code);
    });
  }
  it('shows the two set-up commands', () => {
    expect(readme).toContain('npm ci && npm run demo');
    expect(readme).toContain('npm ci && npm test');
  });
});

describe("the README names tool-runner/otel's span attributes", () => {
  /** Every file of `dir` (and below) ending in `.ts`, as text. */
  const sources = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [readFileSync(join(dir, entry.name), 'utf8')] : []));
  const setBy = (files: string[]) => new Set(files.flatMap((file) => [...file.matchAll(/'((?:gen_ai|tool_runner)\.[a-z_.]+)'/g)].map((match) => match[1]!)));
  const named = new Set([...readme.matchAll(/`((?:gen_ai|tool_runner)\.[a-z_.]+(?:\.\*)?)`/g)].map((match) => match[1]!));

  it("each attribute of its own it sets (tool_runner.*), which no convention describes", () => {
    const own = [...setBy(sources('src/otel'))].filter((name) => name.startsWith('tool_runner.'));
    expect(own.length).toBeGreaterThanOrEqual(4);
    expect(own.filter((name) => !named.has(name))).toEqual([]);
  });

  it('and only attributes some span has', () => {
    const set = setBy(sources('src'));
    expect([...named].filter((name) => !(name.endsWith('.*') ? [...set].some((each) => each.startsWith(name.slice(0, -1))) : set.has(name)))).toEqual([]);
  });
});
