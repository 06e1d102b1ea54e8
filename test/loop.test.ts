import { describe, expect, it } from 'vitest';
import { toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, weatherTool } from './helpers.js';

describe('the loop', () => {
  it('yields each assistant message, runs the tools and sends their results back', async () => {
    const call = toolUse('get_weather', { location: 'Paris' });
    const server = await mockServer([{ content: [text('Let me check.'), call] }, { content: [text('21°C in Paris.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    const seen = [];
    for await (const message of runner) seen.push(message);

    expect(seen.map((message) => message.stop_reason)).toEqual(['tool_use', 'end_turn']);
    expect(calls).toEqual(['Paris']);
    const second = server.requests[1]!.body;
    expect(second.messages).toEqual([
      baseParams.messages[0],
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.', citations: null }, call] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: (call as { id: string }).id,
            content: [{ type: 'text', text: '{"location":"Paris","unit":"celsius","temperature":21}' }],
          },
        ],
      },
    ]);
    expect(second.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        input_schema: expect.objectContaining({ type: 'object', required: ['location'] }),
      },
    ]);
    expect(second).not.toHaveProperty('max_iterations');
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(await runner.done()).toBe(seen[1]);
    server.assertComplete();
  });

  it('await runner drives the loop and resolves to the last message', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('Done.')] },
    ]);
    const final = await toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    expect(final.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(server.requests).toHaveLength(2);
  });
});
