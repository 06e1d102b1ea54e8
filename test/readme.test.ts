/** Every README code block marked `<!-- example: path -->` is taken verbatim from that example file. */
import { readFileSync } from 'node:fs';
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
