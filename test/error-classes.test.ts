/**
 * `instanceof` of the runner's error classes holds across copies of the package: the CommonJS build
 * bundles each entry whole (`tool-runner/dbos` carries its own runner), so an error its runner throws
 * comes from another copy of the class than the one `tool-runner` exports. A second copy of the
 * modules is loaded here the way a second bundle would be: afresh.
 */
import { describe, expect, it, vi } from 'vitest';
import { ContextOverflowError, HookError, OutputError, ReplyError, ToolError, ValidatorError } from 'tool-runner';

describe('error classes across copies of the package', () => {
  it('an error made by another copy is an instance of the class tool-runner exports; a subclass keeps the usual meaning', async () => {
    vi.resetModules();
    const copy = await import('../src/index.js');
    expect(copy.OutputError).not.toBe(OutputError);
    const made = [
      [new copy.ReplyError('broken', { cause: null }), ReplyError],
      [new copy.ValidatorError('add', new Error('no eval')), ValidatorError],
      [new copy.OutputError('bad', { text: '', issues: [], stopReason: 'end_turn' }), OutputError],
      [new copy.HookError('onToolCall', new Error('x')), HookError],
      [new copy.ContextOverflowError(new copy.ReplyError('x', { cause: null }) as never, { tokens: 3, limit: 2 }), ContextOverflowError],
      [new copy.ToolError('no such order'), ToolError],
    ] as const;
    for (const [error, Class] of made) expect(error).toBeInstanceOf(Class);
    // Not the other classes', and a user's subclass is no namesake.
    expect(new copy.ReplyError('x', { cause: null })).not.toBeInstanceOf(OutputError);
    class Mine extends ToolError {}
    expect(new copy.ToolError('x')).not.toBeInstanceOf(Mine);
    expect(new Mine('x')).toBeInstanceOf(ToolError);
    expect({ name: 'ToolError', content: 'x' }).not.toBeInstanceOf(ToolError);
  });
});
