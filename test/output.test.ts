/**
 * Typed final output (`options.output`, SPEC §9.2 and §9.7): sent as `output_config.format`, the
 * final text parsed and validated into `runner.output`, a repair turn for an invalid one, and an
 * `OutputError` when it stays invalid, or the model refuses or is cut off.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OutputError, type ToolRunner, resumeToolRunner, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, sleep, unhandledDuring, weatherTool, wire } from './helpers.js';

const report = z.object({ city: z.string(), temperature: z.number(), tags: z.array(z.string()).default([]) });
const json = (value: unknown) => text(JSON.stringify(value));

describe('options.output', () => {
  it('sends the schema as output_config.format (the caller’s other keys kept) and parses the final text into runner.output', async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })] }, { content: [json({ city: 'Paris', temperature: 21 })] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], output_config: { effort: 'low' } }, { output: report });
    const seen: unknown[] = [];
    for await (const _message of runner) seen.push([runner.output, runner.stoppedBy]);
    // Inside the loop the run has not ended: no output, no stop.
    expect(seen).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
    expect(runner.output).toEqual({ city: 'Paris', temperature: 21, tags: [] });
    expect(runner.stoppedBy).toBe('model');
    for (const request of server.requests) {
      expect(wire(request).body.output_config).toEqual({
        effort: 'low',
        format: { type: 'json_schema', schema: expect.objectContaining({ type: 'object', additionalProperties: false, required: ['city', 'temperature'] }) },
      });
    }
    // The caller's params are not changed: the format is added to each request.
    expect(runner.params.output_config).toEqual({ effort: 'low' });
  });

  it('takes a JSON Schema object too, validated at run time', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'], additionalProperties: false } as const;
    const server = await mockServer([{ content: [json({ answer: 'many' })] }, { content: [json({ answer: 42 })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: schema });
    await runner;
    expect(runner.output).toEqual({ answer: 42 });
    expect(wire(server.requests[0]!).body.output_config.format.schema).toEqual(schema);
    expect(wire(server.requests[1]!).messages.at(-1).content).toMatch(/- answer: must be integer/);
  });

  it('an invalid final text gets one repair turn naming each failing field, the invalid reply kept before it', async () => {
    const server = await mockServer([
      { content: [json({ city: 'Paris', temperature: 'warm', tags: [1] })] },
      { content: [json({ city: 'Paris', temperature: 21 })] },
    ]);
    const runner = toolRunner(server.client(), baseParams, { output: report });
    const final = await runner;
    expect(runner.output).toEqual({ city: 'Paris', temperature: 21, tags: [] });
    expect(server.requests).toHaveLength(2);
    const repair = wire(server.requests[1]!).messages;
    expect(repair.at(-2)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: '{"city":"Paris","temperature":"warm","tags":[1]}' }] });
    expect(repair.at(-1).role).toBe('user');
    expect(repair.at(-1).content).toMatch(/- temperature: .*number/i);
    expect(repair.at(-1).content).toMatch(/- tags\[0\]: .*string/i);
    expect(final.content).toEqual([expect.objectContaining({ text: '{"city":"Paris","temperature":21}' })]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('an answer with hundreds of failing items: the repair turn lists the first 20 and how many more, as an invalid call does (the OutputError keeps every issue)', async () => {
    const list = { type: 'object', properties: { ids: { type: 'array', items: { type: 'integer' } } }, required: ['ids'] } as const;
    const ids = Array.from({ length: 300 }, (_, at) => `id-${at}`);
    const server = await mockServer([{ content: [json({ ids })] }, { content: [json({ ids })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: list });
    const error = await runner.runUntilDone().then(() => undefined, (thrown: unknown) => thrown as OutputError);
    const repair: string = wire(server.requests[1]!).messages.at(-1).content;
    expect(repair.match(/^- ids\[\d+\]: /gm)).toHaveLength(20);
    expect(repair).toMatch(/^- … and 280 more\nReply again with only the corrected JSON\.$/m);
    expect(repair.length).toBeLessThan(2_000);
    expect(error?.issues).toHaveLength(300);
    expect(error?.message).toMatch(/^  - … and 280 more$/m);
  });

  it('still invalid after the repair turns: OutputError from the iteration and from await, with the text, the issues and the stop reason', async () => {
    const server = await mockServer([{ content: [text('{"city": "Paris"}')] }, { content: [text('not json at all')] }]);
    const runner = toolRunner(server.client(), baseParams, { output: report });
    const caught = await (async () => {
      try {
        for await (const _ of runner) {
          // each reply
        }
      } catch (error) {
        return error;
      }
    })();
    expect(caught).toBeInstanceOf(OutputError);
    const error = caught as OutputError;
    expect(error.stopReason).toBe('end_turn');
    expect(error.text).toBe('not json at all');
    expect(error.issues).toEqual([{ path: '(root)', message: expect.stringMatching(/^is not valid JSON/) }]);
    expect(error.message).toMatch(/after 1 repair turn/);
    expect(runner.output).toBeUndefined();
    expect(runner.stoppedBy).toBe('error');
    expect(server.requests).toHaveLength(2);

    // Iterating again asks once more, with the issues; the invalid reply stays before it.
    server.setSteps([{ content: [json({ city: 'Paris', temperature: 3 })] }]);
    await runner;
    expect(runner.output).toMatchObject({ temperature: 3 });
    expect(runner.stoppedBy).toBe('model');
    expect(wire(server.requests[2]!).messages.at(-1).content).toMatch(/- \(root\): is not valid JSON/);
    expect(historyProblems(runner.params.messages)).toEqual([]);

    // `await runner` rejects with it too.
    server.setSteps([{ content: [text('{}')] }, { content: [text('{}')] }]);
    const awaited = toolRunner(server.client(), baseParams, { output: report });
    await expect(awaited).rejects.toMatchObject({ name: 'OutputError', stopReason: 'end_turn', text: '{}', issues: [{ path: 'city' }, { path: 'temperature' }] });
    expect(awaited.stoppedBy).toBe('error');
  });

  it('the repair turns are each final answer\'s: a question pushed after a repaired answer gets its own, in the run and after a resume', async () => {
    const bad = json({ city: 'Paris', temperature: 'warm' });
    const good = (temperature: number) => json({ city: 'Paris', temperature });
    const server = await mockServer([{ content: [bad] }, { content: [good(21)] }, { content: [bad] }, { content: [good(22)] }, { content: [bad] }, { content: [good(23)] }]);
    const runner = toolRunner(server.client(), baseParams, { output: report });
    for await (const message of runner) {
      // The first answer, once repaired (its output is settled after the loop body, which may go on).
      if (message.content.some((block) => block.type === 'text' && block.text.includes('21'))) runner.pushMessages(message, { role: 'user', content: 'And tomorrow?' });
    }
    expect(runner.output).toMatchObject({ temperature: 22 });
    expect(server.requests).toHaveLength(4);
    // Resumed (the snapshot holds the repairs counted): a third question's invalid answer is repaired too.
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { options: { output: report } });
    resumed.pushMessages({ role: 'user', content: 'And the day after?' });
    await resumed;
    expect(resumed.output).toMatchObject({ temperature: 23 });
    expect(server.requests).toHaveLength(6);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a finished run resumed with an output schema its answer does not pass: a TypeError naming the fields, not an output left undefined without a word', async () => {
    const server = await mockServer([{ content: [json({ city: 'Paris', temperature: 21 })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: report });
    await runner;
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    const other = z.object({ country: z.string() });
    expect(() => resumeToolRunner(server.client(), snapshot, { options: { output: other } })).toThrow(
      /^resumeToolRunner: the run ended on an answer that options\.output does not take:\n {2}- country: .*\nResume with the output schema the run had\.$/,
    );
    // With its own schema, the answer is read again.
    expect(resumeToolRunner(server.client(), snapshot, { options: { output: report } }).output).toMatchObject({ city: 'Paris', temperature: 21 });
  });

  it('after an OutputError, a question pushed instead of the repair gets repair turns of its own, in the run and after a resume', async () => {
    for (const via of ['in process', 'a snapshot', 'a snapshot taken after the push'] as const) {
      const bad = json({ city: 'Paris', temperature: 'warm' });
      const server = await mockServer([{ content: [bad] }, { content: [bad] }, { content: [bad] }, { content: [json({ city: 'Rome', temperature: 25 })] }]);
      let runner: ToolRunner<boolean, unknown> = toolRunner(server.client(), baseParams, { output: report });
      await expect(runner.runUntilDone()).rejects.toThrow(/after 1 repair turn/);
      const resumed = () => resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { options: { output: report } });
      if (via === 'a snapshot') runner = resumed();
      runner.pushMessages({ role: 'user', content: 'And in Rome?' });
      if (via === 'a snapshot taken after the push') runner = resumed();
      await runner.runUntilDone();
      expect(runner.output).toMatchObject({ city: 'Rome' });
      expect(server.requests).toHaveLength(4);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it('a snapshot taken in the loop body after it pushed a question keeps no repair count of the answer before: resumed, the question gets its own repair turn', async () => {
    const bad = json({ city: 'Paris', temperature: 'warm' });
    const server = await mockServer([{ content: [bad] }, { content: [json({ city: 'Paris', temperature: 21 })] }, { content: [bad] }, { content: [json({ city: 'Rome', temperature: 25 })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: report });
    let snapshot: unknown;
    for await (const message of runner) {
      if (message.content.some((block) => block.type === 'text' && block.text.includes('21'))) {
        runner.pushMessages(message, { role: 'user', content: 'And in Rome?' });
        snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
        break;
      }
    }
    const resumed = resumeToolRunner(server.client(), snapshot as never, { options: { output: report } });
    await resumed;
    expect(resumed.output).toMatchObject({ city: 'Rome' });
    expect(server.requests).toHaveLength(4);
  });

  it('outputRepairs: 0 sends no repair turn', async () => {
    const server = await mockServer([{ content: [json({ city: 'Paris' })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: report, outputRepairs: 0 });
    const error = await runner.then(
      () => undefined,
      (thrown: unknown) => thrown as OutputError,
    );
    expect(error).toBeInstanceOf(OutputError);
    expect(error!.issues).toEqual([{ path: 'temperature', message: expect.any(String) }]);
    expect(error!.message).not.toMatch(/repair/);
    expect(server.requests).toHaveLength(1);
  });

  it('a refusal or a reply cut off by max_tokens: OutputError at once, no repair turn, no further request', async () => {
    for (const stop_reason of ['refusal', 'max_tokens'] as const) {
      const server = await mockServer([{ content: [text('{"city": "Par')], stop_reason }]);
      const runner = toolRunner(server.client(), baseParams, { output: report });
      const error = (await runner.then(
        () => undefined,
        (thrown: unknown) => thrown,
      )) as OutputError;
      expect(error).toBeInstanceOf(OutputError);
      expect(error.stopReason).toBe(stop_reason);
      expect(error.text).toBe('{"city": "Par');
      expect(server.requests).toHaveLength(1);
      expect(runner.stoppedBy).toBe('error');
      expect(runner.output).toBeUndefined();
    }
  });

  it('a streamed run: the format is sent, the events arrive as they stream, the final text is parsed', async () => {
    const server = await mockServer({
      steps: [{ content: [toolUse('get_weather', { location: 'Oslo' })] }, { content: [json({ city: 'Oslo', temperature: -3, tags: ['cold'] })], eventDelayMs: 2 }],
      chunkSize: 8,
    });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], stream: true }, { output: report });
    let deltas = 0;
    for await (const stream of runner) {
      for await (const event of stream) if (event.type === 'content_block_delta') deltas++;
    }
    expect(deltas).toBeGreaterThan(3);
    expect(runner.output).toEqual({ city: 'Oslo', temperature: -3, tags: ['cold'] });
    expect(wire(server.requests[1]!).body).toMatchObject({ stream: true, output_config: { format: { type: 'json_schema' } } });
  });

  it('on a message thread: the repair turn continues the thread with only the repair message', async () => {
    const server = await mockServer([{ content: [json({ city: 'Rome' })] }, { content: [json({ city: 'Rome', temperature: 30 })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: report });
    await runner;
    expect(runner.output).toMatchObject({ city: 'Rome', temperature: 30 });
    const [first, repair] = server.requests.map((request) => wire(request).body);
    expect(first.thread).toEqual({ type: 'create' });
    expect(repair.thread).toMatchObject({ type: 'continue' });
    expect(repair.messages).toEqual([{ role: 'user', content: expect.stringMatching(/- temperature:/) }]);
    expect(repair.output_config.format.type).toBe('json_schema');
  });

  it('over an SDK BetaMessageThread (toolRunner(thread, settings, options))', async () => {
    const server = await mockServer([{ content: [json({ city: 'Lima', temperature: 18 })] }]);
    const thread = server.client().beta.messages.thread({ model: baseParams.model, max_tokens: 256, messages: baseParams.messages });
    const runner = toolRunner(thread, {}, { output: report });
    await runner;
    expect(runner.output).toEqual({ city: 'Lima', temperature: 18, tags: [] });
    expect(wire(server.requests[0]!).body.output_config.format.type).toBe('json_schema');
  });

  it('with client-side compaction: the summary request asks for text (no format), the run ends on parsed output', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })], usage: { input_tokens: 900 } },
      { content: [text('<summary>Paris: 21°C.</summary>')] },
      { content: [json({ city: 'Paris', temperature: 21 })] },
    ]);
    const runner = toolRunner(
      server.client(),
      { ...baseParams, tools: [weatherTool()], output_config: { effort: 'medium' }, compactionControl: { enabled: true, contextTokenThreshold: 500 } },
      { output: report },
    );
    await runner;
    const summary = wire(server.requests[1]!).body;
    expect(summary.output_config).toEqual({ effort: 'medium' });
    expect(wire(server.requests[2]!).body.output_config.format.type).toBe('json_schema');
    expect(runner.output).toMatchObject({ temperature: 21 });
  });

  it('a repair turn that overflows and is compacted: a snapshot taken then keeps the repair turns counted, as the run does', async () => {
    const steps = [
      { content: [json({ city: 'Paris', temperature: '21' })] },
      { error: { status: 400, message: 'prompt is too long: 3000 tokens > 2000 maximum' } },
      { content: [text('<summary>S</summary>')] },
      { content: [json({ city: 'Paris', temperature: '21°C' })] },
    ];
    const server = await mockServer(steps);
    let snapshot: ReturnType<ToolRunner['toJSON']> | undefined;
    const runner: ToolRunner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, compactionControl: { enabled: true } }, {
      output: report,
      // Taken as the repair turn goes again, over the compacted history.
      onEvent: (event) => void (event.type === 'request.start' && event.requestId === 4 && (snapshot = JSON.parse(JSON.stringify(runner.toJSON())))),
    });
    await expect(runner.runUntilDone()).rejects.toThrow(/after 1 repair turn/);
    const again = await mockServer(steps.slice(3, 4));
    const resumed = resumeToolRunner(again.client(), snapshot!, { options: { output: report } });
    await expect(resumed.runUntilDone()).rejects.toThrow(/after 1 repair turn/);
    again.assertComplete();
  });

  it('resumed from a JSON snapshot, the output has the schema\'s type: a transform\'s value is made again from the final text', async () => {
    const schema = z.object({ when: z.string().transform((value) => new Date(value)), where: z.url().transform((value) => new URL(value)) });
    const answer = { when: '2026-01-02T00:00:00.000Z', where: 'https://example.com/otters' };
    const server = await mockServer([{ content: [text(JSON.stringify(answer))] }]);
    const runner = toolRunner(server.client(), baseParams, { output: schema });
    await runner;
    // A URL would be cloned into an empty object: the snapshot keeps the text, not the value.
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.control.output).toEqual({ repaired: 0, text: JSON.stringify(answer) });
    const resumed = resumeToolRunner(server.client(), snapshot, { options: { output: schema } });
    expect(resumed.output?.when).toBeInstanceOf(Date);
    expect(resumed.output?.where).toBeInstanceOf(URL);
    await resumed;
    expect(resumed.output?.when.toISOString()).toBe(answer.when);
    expect(server.requests).toHaveLength(1);
    // A snapshot an older version wrote keeps the value as JSON left it: its final text is parsed again.
    const { text: _text, ...older } = snapshot.control.output;
    const old = resumeToolRunner(server.client(), { ...snapshot, control: { ...snapshot.control, output: { ...older, value: answer } } }, { options: { output: schema } });
    expect(old.output?.when).toBeInstanceOf(Date);
  });


  it('an async refinement of the output schema runs once an answer, and one that rejects leaves no unhandled rejection', async () => {
    let checks = 0;
    const unhandled = await unhandledDuring(async () => {
      const known = z.object({ city: z.string().refine(async (city) => (checks++, city === 'Paris'), 'unknown city') });
      const server = await mockServer([{ content: [json({ city: 'Lyon' })] }, { content: [json({ city: 'Paris' })] }]);
      const runner = toolRunner(server.client(), baseParams, { output: known });
      await runner;
      expect(runner.output).toEqual({ city: 'Paris' });
      // One check of each answer: the invalid one (repaired) and the valid one.
      expect(checks).toBe(2);
      expect(wire(server.requests[1]!).messages.at(-1).content).toMatch(/- city: unknown city/);
      const failing = z.object({ city: z.string().refine(async () => Promise.reject(new Error('directory offline'))) });
      const again = await mockServer([{ content: [json({ city: 'Paris' })] }]);
      await expect(toolRunner(again.client(), baseParams, { output: failing }).runUntilDone()).rejects.toThrow('directory offline');
    });
    expect(unhandled).toEqual([]);
  });
  it('the output schema\'s own code fails on the final answer (a lookup offline): iterated again, or resumed, the run reads that answer again, sending nothing', async () => {
    let lookups = 0;
    const looked = z.object({ city: z.string().refine(async () => (lookups++ === 0 ? Promise.reject(new Error('directory offline')) : true)) });
    const server = await mockServer([{ content: [json({ city: 'Paris' })] }, { content: [json({ city: 'Oslo' })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: looked });
    await expect(runner.runUntilDone()).rejects.toThrow('directory offline');
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    // It sent the history ending on the answer (the model asked to go on from its own answer) and ended on what came.
    await expect(runner.runUntilDone()).resolves.toMatchObject({ content: [{ text: '{"city":"Paris"}' }] });
    expect(runner.output).toEqual({ city: 'Paris' });
    expect(runner.stoppedBy).toBe('model');
    expect(server.requests).toHaveLength(1);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    // A snapshot taken after the failure: the resumed run reads the answer again too.
    lookups = 0;
    const resumed = resumeToolRunner(server.client(), snapshot, { options: { output: looked } });
    await expect(resumed.runUntilDone()).rejects.toThrow('directory offline');
    await resumed;
    expect(resumed.output).toEqual({ city: 'Paris' });
    expect(server.requests).toHaveLength(1);
  });

  it("a Standard Schema whose validate answers no result (nor a promise of one): a TypeError naming options.output and the schema's vendor, not a bare one or an output left undefined", async () => {
    const schemaOf = (validate: (value: unknown) => unknown) => ({
      '~standard': { version: 1, vendor: 'acme', validate, jsonSchema: { input: () => ({ type: 'object', properties: { city: { type: 'string' } } }), output: () => ({ type: 'object' }) } },
    });
    const answers: Array<[(value: unknown) => unknown, string]> = [
      // Each failed with "the schema's validate answered 5, …", naming neither the option nor the schema.
      [() => 5, 'the acme schema\'s validate answered 5, not a result ({ value } or { issues })'],
      [async () => undefined, 'the acme schema\'s validate answered undefined, not a result ({ value } or { issues })'],
      [() => ({ issues: 'no city' }), 'the acme schema\'s validate answered issues that are no list of { message, path? }: "no city"'],
      // A safeParse result, sync or not: the run ended with runner.output undefined, and no word.
      [(data) => ({ success: true, data }), 'the acme schema\'s validate answered {"success":true,"data":{"city":"Paris"}}, not a result ({ value } or { issues })'],
      [async (data) => ({ success: true, data }), 'the acme schema\'s validate answered {"success":true,"data":{"city":"Paris"}}, not a result ({ value } or { issues })'],
    ];
    for (const [validate, said] of answers) {
      const server = await mockServer([{ content: [json({ city: 'Paris' })] }]);
      const runner = toolRunner(server.client(), baseParams, { output: schemaOf(validate) as never });
      const error = await runner.runUntilDone().catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(TypeError);
      expect((error as Error).message).toBe(`toolRunner: options.output: ${said}`);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
    // A result of either kind, and a thenable of one (taken for the result itself before): read as they are.
    const thenable = (result: object) => ({ then: (resolve: (value: object) => void) => resolve(result) });
    for (const validate of [(value: unknown) => ({ value }), (value: unknown) => thenable({ value })]) {
      const server = await mockServer([{ content: [json({ city: 'Paris' })] }]);
      const runner = toolRunner(server.client(), baseParams, { output: schemaOf(validate) as never });
      await runner;
      expect(runner.output).toEqual({ city: 'Paris' });
    }
  });

  for (const stream of [false, true]) it(`the run's signal ends an output check that hangs (an async refinement whose lookup never answers)${stream ? ', streamed' : ''}: the run rejects as aborted, and iterated again with a new signal reads the answer again`, async () => {
    const controller = new AbortController();
    let hang = true;
    // Aborted once the check runs (a delay from the start would race the reply on a loaded machine).
    const looked = z.object({ city: z.string().refine(async () => (hang ? (setTimeout(() => controller.abort(), 20), new Promise<boolean>(() => {})) : true)) });
    const server = await mockServer([{ content: [json({ city: 'Paris' })] }]);
    const runner = toolRunner(server.client(), { ...baseParams, stream }, { output: looked, signal: controller.signal });
    // It waited for the check for ever.
    await expect(Promise.race([runner.runUntilDone(), sleep(2_000).then(() => 'hung')])).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    hang = false;
    runner.setRequestOptions({ signal: new AbortController().signal });
    await runner;
    expect(runner.output).toEqual({ city: 'Paris' });
    expect(server.requests).toHaveLength(1);
  });

  it("an output check ended by the run's signal, the run iterated again on that aborted signal: it rejects at once as aborted (the check that hangs hung it), and reads the answer once given a new signal", async () => {
    const controller = new AbortController();
    let hang = true;
    const looked = z.object({ city: z.string().refine(async () => (hang ? (setTimeout(() => controller.abort(), 20), new Promise<boolean>(() => {})) : true)) });
    const server = await mockServer([{ content: [json({ city: 'Paris' })] }]);
    const runner = toolRunner(server.client(), baseParams, { output: looked, signal: controller.signal });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(Promise.race([runner.runUntilDone(), sleep(2_000).then(() => 'hung')])).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    expect(runner.toJSON().control?.unread).toBe('model');
    hang = false;
    runner.setRequestOptions({ signal: new AbortController().signal });
    await runner.runUntilDone();
    expect(runner.output).toEqual({ city: 'Paris' });
    expect(server.requests).toHaveLength(1);
  });

  it('the run aborted in the loop body of the final answer: an async output check still reads it, as a synchronous one does (the abort came before it)', async () => {
    for (const schema of [z.object({ city: z.string() }), z.object({ city: z.string().refine(async () => true) })]) {
      const server = await mockServer([{ content: [json({ city: 'Paris' })] }]);
      const controller = new AbortController();
      const runner = toolRunner(server.client(), baseParams, { output: schema, signal: controller.signal });
      for await (const _message of runner) controller.abort();
      expect(runner.stoppedBy).toBe('model');
      expect(runner.output).toEqual({ city: 'Paris' });
    }
  });

  it('a format the params are given later (setMessagesParams) beside options.output: a clear error before the request, not replaced in silence', async () => {
    const other = { type: 'json_schema', schema: { type: 'object', properties: { other: { type: 'string' } } } } as const;
    for (const change of [{ output_config: { format: other } }, { output_format: other }]) {
      const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })] }, { content: [json({ city: 'Paris', temperature: 21 })] }]);
      const runner = toolRunner(server.client(), { ...baseParams, max_iterations: 1, tools: [weatherTool()] }, { output: report });
      await runner;
      expect(runner.stoppedBy).toBe('max_iterations');
      runner.setMessagesParams((params) => ({ ...params, ...change, max_iterations: 5 }));
      await expect(runner.runUntilDone()).rejects.toThrow(/options\.output and a format in the params \(output_config\.format or output_format\) were both given/);
      expect(server.requests).toHaveLength(1);
      // Taken out again, the run goes on with options.output's format.
      runner.setMessagesParams(({ output_config: _config, output_format: _format, ...params }) => params);
      await runner;
      expect(runner.output).toEqual({ city: 'Paris', temperature: 21, tags: [] });
    }
  });

  it('a finished run resumed with a question after its answer: the old output is gone once the run goes on, so a limit that stops it leaves none (an async schema\'s late read too)', async () => {
    const schemas = [report, z.object({ city: z.string().refine(async () => true), temperature: z.number(), tags: z.array(z.string()).default([]) })];
    for (const schema of schemas) {
      const server = await mockServer([{ content: [json({ city: 'Paris', temperature: 21 })] }, { content: [toolUse('get_weather', { location: 'Oslo' })] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, { output: schema });
      await runner;
      expect(runner.output).toMatchObject({ city: 'Paris' });
      runner.pushMessages({ role: 'user', content: 'And in Oslo?' });
      const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
      const resumed = resumeToolRunner(server.client(), { ...snapshot, params: { ...snapshot.params, max_iterations: 2 } }, { tools: [weatherTool()], options: { output: schema } });
      await resumed;
      expect(resumed.stoppedBy).toBe('max_iterations');
      // Paris answered the first question, not this one: the run a limit stopped before its answer has none.
      expect(resumed.output).toBeUndefined();
      expect(resumed.toJSON().control?.output?.text).toBeUndefined();
    }
  });

  it('bad input is a clear error at construction, before any request', async () => {
    const server = await mockServer([]);
    const make = (options: object, params: object = {}) => () => toolRunner(server.client(), { ...baseParams, ...params }, options as never);
    expect(make({ output: z.string() })).toThrow(/toolRunner: options\.output must describe an object \(type: "object"\) at the top level, got type "string"/);
    expect(make({ output: { type: 'array', items: {} } })).toThrow(/options\.output must describe an object/);
    expect(make({ output: 'json' })).toThrow(/options\.output must be a zod schema, a Standard Schema or a JSON Schema object, got string/);
    expect(make({ output: report }, { output_config: { format: { type: 'json_schema', schema: {} } } })).toThrow(/options\.output and a format in the params/);
    expect(make({ output: report, outputRepairs: -1 })).toThrow(/options\.outputRepairs must be a whole number of at least 0, got -1/);
    expect(make({ output: report, outputRepairs: 1.5 })).toThrow(/outputRepairs must be a whole number/);
    expect(server.requests).toHaveLength(0);
  });
});
