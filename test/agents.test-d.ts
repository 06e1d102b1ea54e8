import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { type PendingApproval, type RunnerEvent, type ToolContext, agentTool } from 'tool-runner';

const model = 'claude-sonnet-5-5';

describe('agentTool types', () => {
  it('the input is { task: string } by default, or typed from inputSchema; params gets the tool context', () => {
    const plain = agentTool({
      name: 'plain',
      description: 'd',
      params: (input, context) => {
        expectTypeOf(input).toEqualTypeOf<{ task: string }>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        return { model, max_tokens: 10, messages: [{ role: 'user', content: input.task }] };
      },
    });
    expectTypeOf(plain.name).toEqualTypeOf<'plain'>();
    agentTool({
      name: 'typed',
      description: 'd',
      inputSchema: z.object({ city: z.string(), days: z.number() }),
      params: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ city: string; days: number }>();
        return { model, max_tokens: 10, messages: [{ role: 'user', content: input.city }] };
      },
    });
    // @ts-expect-error params must return the runner's params
    agentTool({ name: 'bad', description: 'd', params: () => 'nope' });
  });

  it('a JSON Schema of additionalProperties alone types params annotated or not (it was "excessively deep")', () => {
    const notes = { type: 'object', additionalProperties: { type: 'string' } } as const;
    agentTool({ name: 'notes', description: 'd', inputSchema: notes, params: (input: Record<string, string>) => ({ model, max_tokens: 10, messages: [{ role: 'user', content: Object.values(input).join('\n') }] }) });
    agentTool({
      name: 'notes',
      description: 'd',
      inputSchema: notes,
      params: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ [key: string]: string }>();
        return { model, max_tokens: 10, messages: [{ role: 'user', content: Object.values(input).join('\n') }] };
      },
    });
  });

  it('events and pending approvals carry an optional path', () => {
    expectTypeOf<RunnerEvent['path']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf<PendingApproval['path']>().toEqualTypeOf<string[] | undefined>();
  });

  it("an agent.text event is a sub-agent's: narrowed to it, its path is there (the README reads event.path.join(' > '))", () => {
    const listener = (event: RunnerEvent) => {
      if (event.type === 'agent.text') return `${event.path.join(' > ')} (${event.callPath.join(',')}): ${event.text}`;
      return undefined;
    };
    expectTypeOf(listener).returns.toEqualTypeOf<string | undefined>();
    expectTypeOf<Extract<RunnerEvent, { type: 'agent.text' }>['path']>().toEqualTypeOf<string[]>();
  });
});
