/**
 * The checkpoint after each reply (`runner.toJSON()` in the loop body) taken at the model's final
 * answer: the snapshot holds the answer and has ended on it, so the resumed run resolves to it without
 * a request, its usage and iteration counted once — as a snapshot taken after the run has.
 */
import { describe, expect, it } from 'vitest';
import { type RunnerSnapshot, resumeToolRunner, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, weatherTool, wire } from './helpers.js';

const usage = { input_tokens: 100, output_tokens: 10 };

describe('a snapshot taken in the loop body at the final answer', () => {
  for (const stream of [false, true]) {
    for (const thread of [undefined, false] as const) {
      it(`holds the answer: the resumed run resolves to it without a request${stream ? ', streamed' : ''}${thread === false ? ', whole history' : ', over a thread'}`, async () => {
        const server = await mockServer([
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w')], usage },
          { content: [text('21°C in Paris.')], usage },
          { content: [text('a second answer: the model was asked again')], usage },
          { content: [text('Yes, take a coat.')], usage },
        ]);
        const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], stream, ...(thread === false && { thread }) });
        let saved = '';
        for await (const item of runner) {
          if (stream) await (item as { finalMessage(): Promise<unknown> }).finalMessage();
          saved = JSON.stringify(runner.toJSON());
        }
        expect(server.requests).toHaveLength(2);
        const snapshot = JSON.parse(saved) as RunnerSnapshot;
        expect(snapshot).toMatchObject({ stoppedBy: 'model', iteration: 2, usage: { input_tokens: 200, output_tokens: 20 } });
        expect(historyProblems(snapshot.params.messages)).toEqual([]);

        const resumed = resumeToolRunner(server.client(), snapshot, { tools: [weatherTool()] });
        const final = await resumed;
        expect(final.content).toEqual([expect.objectContaining({ text: '21°C in Paris.' })]);
        expect(server.requests).toHaveLength(2);
        expect({ usage: resumed.usage, iteration: resumed.iteration, stoppedBy: resumed.stoppedBy }).toEqual({ usage: runner.usage, iteration: 2, stoppedBy: 'model' });
        expect(resumed.params.messages).toEqual(runner.params.messages);

        // Resumed again, with a message pushed: it goes on from the answer (over a thread, continuing from its reply).
        const onwards = resumeToolRunner(server.client(), snapshot, { tools: [weatherTool()] });
        onwards.pushMessages({ role: 'user', content: 'Should I take a coat?' });
        await onwards;
        expect(server.requests).toHaveLength(3);
        const { body, messages } = wire(server.requests[2]!);
        if (thread === false) expect(messages.slice(-2).map((message: { role: string }) => message.role)).toEqual(['assistant', 'user']);
        else expect(body.thread).toMatchObject({ type: 'continue' });
      });
    }
  }

  it('a reply the run does not keep (blank text only) is not held either; the run has ended all the same', async () => {
    const server = await mockServer([{ content: [text(' ')], usage }]);
    const runner = toolRunner(server.client(), { ...baseParams });
    let snapshot: RunnerSnapshot | undefined;
    for await (const _ of runner) snapshot = runner.toJSON();
    expect(snapshot).toMatchObject({ stoppedBy: 'model', usage: { input_tokens: 100 } });
    expect(snapshot!.params.messages).toEqual(runner.params.messages);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(snapshot)), {});
    await resumed;
    expect(server.requests).toHaveLength(1);
    expect(resumed.usage.input_tokens).toBe(100);
  });
  it('with a server-side compaction the body scheduled (compactBeforeNextTurn), the answer is not held: the run sends the compaction first', async () => {
    const server = await mockServer([{ content: [text('21°C in Paris.')], usage }]);
    const runner = toolRunner(server.client(), { ...baseParams });
    let snapshot: RunnerSnapshot | undefined;
    for await (const _ of runner) {
      runner.compactBeforeNextTurn();
      snapshot = runner.toJSON();
      break;
    }
    expect(snapshot!.stoppedBy).toBeUndefined();
    expect(snapshot!.compaction).toMatchObject({ scheduled: expect.any(Object) });
    expect(snapshot!.params.messages).toHaveLength(1);
  });
  it('a reply cut off by max_tokens with a call in it ends the run: resumed from the loop body\'s snapshot, it ends there too (the cut-off call not answered, no request)', async () => {
    const server = await mockServer([{ content: [text('Let me'), toolUse('get_weather', { location: 'Paris' }, 'toolu_w')], stop_reason: 'max_tokens', usage }, { content: [text('never asked')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    let snapshot: RunnerSnapshot | undefined;
    for await (const _ of runner) snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(runner.stoppedBy).toBe('model');
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: [weatherTool()] });
    expect((await resumed).stop_reason).toBe('max_tokens');
    expect(resumed.stoppedBy).toBe('model');
    expect(server.requests).toHaveLength(1);
    expect(resumed.params.messages).toEqual(runner.params.messages);
  });

  it('with runToolsEagerly, a snapshot taken while onMessage runs on a reply cut off by max_tokens says the call that started had started (as the run does), not that it never ran', async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1'), toolUse('get_weather', { location: 'Rome' }, 'toolu_2')], stop_reason: 'max_tokens', eventDelayMs: 2 }]);
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], runToolsEagerly: true }, { hooks: { onMessage: () => void (snapshot = JSON.parse(JSON.stringify(runner.toJSON()))) } });
    await runner;
    expect(snapshot!.notRun['toolu_1']).toMatch(/^Error: the reply was cut off \(it reached max_tokens\) after the call to 'get_weather' had started; its result was not kept\.$/);
    expect(snapshot!.notRun['toolu_1']).toBe(runner.toJSON().notRun['toolu_1']);
  });
});
