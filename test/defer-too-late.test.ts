/**
 * `deferToolCall()` on a call that has started cannot hold it (as in the SDK's runner), and says so: the hold was meant
 * to keep the call's effect from happening. Without `stream: true`, runToolsEagerly starts every call before the loop
 * body is given the reply, so a hold asked for there never takes; with it, a hold asked for after the stream ended is late.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer } from './helpers.js';

function deleteTool(deleted: string[]) {
  return tool({ name: 'delete_file', description: 'Deletes a file', inputSchema: z.object({ path: z.string() }), run: ({ path }) => (deleted.push(path), `deleted ${path}`) });
}
const steps = () => [{ content: [toolUse('delete_file', { path: '/tmp/a.log' })] }, { content: [text('Done.')] }];

describe('deferToolCall on a call that has started', () => {
  it('without stream: true, a hold asked for in the loop body is said to come too late, and how to hold calls', async () => {
    const server = await mockServer(steps());
    const { lines, logger } = captureLogger();
    const deleted: string[] = [];
    const runner = toolRunner(server.client({ logLevel: 'warn' }), { ...baseParams, tools: [deleteTool(deleted)], runToolsEagerly: true }, { logger });
    for await (const message of runner) {
      for (const block of message.content) if (block.type === 'tool_use') runner.deferToolCall(block);
      expect(runner.deferredToolCalls).toEqual([]);
    }
    const said = lines.filter((line) => line.level === 'warn' && line.message.includes('deferToolCall()'));
    expect(said).toHaveLength(1);
    expect(said[0]!.message).toMatch(/the call to 'delete_file' \(toolu_\w+\) has started already, so it is not held: without stream: true, runToolsEagerly starts/);
    expect(said[0]!.message).toMatch(/set stream: true and call deferToolCall\(\) from the stream's 'contentBlock' listener/);
    expect(deleted).toEqual(['/tmp/a.log']);
  });

  it("with stream: true, a hold asked for once the stream ended is said to come too late; one from the listener holds, and says nothing", async () => {
    for (const late of [true, false]) {
      const server = await mockServer(steps());
      const { lines, logger } = captureLogger();
      const runner = toolRunner(server.client({ logLevel: 'warn' }), { ...baseParams, tools: [deleteTool([])], stream: true, runToolsEagerly: true }, { logger });
      let held = 0;
      for await (const stream of runner) {
        if (!late) stream.on('contentBlock', (block) => block.type === 'tool_use' && runner.deferToolCall(block));
        const message = await stream.finalMessage();
        if (late) for (const block of message.content) if (block.type === 'tool_use') runner.deferToolCall(block.id);
        held += runner.deferredToolCalls.length;
      }
      const said = lines.filter((line) => line.level === 'warn' && line.message.includes('deferToolCall()'));
      expect(said.map((line) => line.message)).toEqual(
        late ? [expect.stringMatching(/^deferToolCall\(\): the call toolu_\w+ has started already, so it is not held: a call starts once the model has moved on from it/)] : [],
      );
      expect(held).toBe(late ? 0 : 1);
    }
  });
});
