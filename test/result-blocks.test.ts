// A tool's content blocks are checked for what the API requires of each kind, and for JSON: a block the SDK
// cannot serialise (a BigInt, a cycle) or the API refuses (an image without a source) used to be kept in the
// history, and every later request of the run failed. Now it is answered as an error saying what it was.
import { describe, expect, it } from 'vitest';
import { ToolError, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolResults, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, wire } from './helpers.js';

const PNG = 'iVBORw0KGgo=';
const png = { type: 'base64', media_type: 'image/png', data: PNG };

/** A tool `odd` that returns `value`, called once by the model. */
const returning = (value: unknown) => tool({ name: 'odd', inputSchema: { type: 'object', properties: {} } as const, run: async () => value as never });

/** Runs a turn that calls `odd`, then a second run over the history the first left: what was sent, and the runner. */
async function callOdd(value: unknown) {
  const server = await mockServer([{ content: [toolUse('odd', {}, 'toolu_odd')] }, { content: [text('done')] }, { content: [text('again')] }]);
  const { lines, logger } = captureLogger();
  const runner = toolRunner(server.client({ maxRetries: 0, logger, logLevel: 'warn' }), { ...baseParams, tools: [returning(value)] });
  const final = await runner;
  // The next request over the same history (a follow-up question) is sent, and answered.
  const next = await toolRunner(server.client({ maxRetries: 0 }), {
    ...baseParams,
    messages: [...runner.params.messages, { role: 'user', content: 'and then?' }],
  });
  return { server, runner, final, next, result: toolResults(server.requests[1]!)[0]!, warnings: lines.filter((line) => line.level === 'warn').map((line) => line.message) };
}

const cyclic: Record<string, unknown> = { type: 'text', text: 'loop' };
cyclic.self = cyclic;

const bad: Array<[string, unknown, string]> = [
  ['a BigInt anywhere in a block', [{ type: 'text', text: 'hi', meta: 10n }], 'an array whose item 0 is a text block that cannot be sent as JSON (meta is a BigInt)'],
  ['a BigInt deep inside', [{ type: 'text', text: 'ok' }, { type: 'image', source: { ...png, extra: { sizes: [1, 2n] } } }], 'an array whose item 1 is an image block that cannot be sent as JSON (source.extra.sizes.1 is a BigInt)'],
  ['a cycle', [cyclic], 'an array whose item 0 is a text block that cannot be sent as JSON (self makes a cycle)'],
  ['a toJSON that throws', [{ type: 'text', text: 'x', when: { toJSON: () => { throw new Error('no date'); } } }], "item 0 is a text block that cannot be sent as JSON (when's toJSON threw: no date)"],
  ['an image without a source', [{ type: 'image' }], 'an array whose item 0 is an image block without a source'],
  ['an image whose source is null', [{ type: 'image', source: null }], 'an image block whose source is null, not an object'],
  ['an image source of no known type', [{ type: 'image', source: { type: 'path', path: '/tmp/a.png' } }], "an image block whose source is of no known type (its type: 'path'; a source is base64, url, file)"],
  ['a base64 image without data', [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }], 'an image block whose base64 source has no data'],
  ['a base64 image without a media type', [{ type: 'image', source: { type: 'base64', data: PNG } }], 'an image block whose base64 source has no media_type'],
  ['a url image whose url is a URL object', [{ type: 'image', source: { type: 'url', url: 42 } }], "an image block whose url source's url is a number, not a string"],
  ['a file image without file_id', [{ type: 'image', source: { type: 'file' } }], 'an image block whose file source has no file_id'],
  ['a document whose source is 42', [{ type: 'document', source: 42 }], 'an array whose item 0 is a document block whose source is a number, not an object'],
  ['a document without a source', [{ type: 'document', title: 'x' }], 'a document block without a source'],
  ['a text document without data', [{ type: 'document', source: { type: 'text', media_type: 'text/plain' } }], 'a document block whose text source has no data'],
  ['a content document holding a bad image', [{ type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'a' }, { type: 'image' }] } }], "a document block whose content source item 1 is an image block without a source"],
  ['a content document holding a search result', [{ type: 'document', source: { type: 'content', content: [{ type: 'search_result' }] } }], 'a document block whose content source item 0 is no text or image block'],
  ['a content document of a number', [{ type: 'document', source: { type: 'content', content: 7 } }], "a document block whose content source's content is a number, not a string or an array"],
  ['a search result without a title', [{ type: 'search_result', source: 'https://x.test', content: [{ type: 'text', text: 'a' }] }], 'a search_result block without a title'],
  ['a search result whose content is a string', [{ type: 'search_result', source: 'https://x.test', title: 'X', content: 'a' }], 'a search_result block whose content is a string, not an array'],
  ['a search result holding an image', [{ type: 'search_result', source: 's', title: 't', content: [{ type: 'image', source: png }] }], 'a search_result block whose content item 0 is no text block'],
  ['a search result holding a text block without text', [{ type: 'search_result', source: 's', title: 't', content: [{ type: 'text' }] }], 'a search_result block whose content item 0 is a text block without text'],
  ['a tool_reference without a tool_name', [{ type: 'tool_reference', name: 'lookup' }], 'a tool_reference block without a tool_name'],
  ['a browser_state without tabs', [{ type: 'browser_state' }], 'a browser_state block without tabs'],
  ['a browser_state tab without a url', [{ type: 'browser_state', tabs: [{ tab_id: 't1', title: '' }] }], 'a browser_state block whose tab 0 has no url'],
  ['a browser_state change of no known type', [{ type: 'browser_state', tabs: [], state_changes: [{ type: 'tab_closed', tab_id: 't1' }] }], "a browser_state block whose state change 0 is of no known type (its type: 'tab_closed'"],
  // JSON would leave a function out, but the run copies its history with structuredClone (a snapshot, a new run
  // over it), which throws on one: kept, it made toJSON() and every toolRunner over the history fail.
  ['a function in a block', [{ type: 'text', text: 'ok', format: () => 'x' }], 'an array whose item 0 is a text block that the run cannot copy (format is a function)'],
  ['a symbol in a block', [{ type: 'image', source: { ...png, tag: Symbol('t') } }], 'an image block that the run cannot copy (source.tag is a symbol)'],
  ['a text block whose text is a number', [{ type: 'text', text: 42 }], 'a text block whose text is a number, not a string'],
];

describe('content blocks the API cannot take are answered as an error saying what they were', () => {
  it.each(bad)('%s', async (_label, value, words) => {
    const { server, runner, final, next, result, warnings } = await callOdd(value);
    // The run went on: the model read an error result naming what was wrong, and answered.
    expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_odd', is_error: true });
    expect(result.content).toEqual(expect.stringContaining(`Error: tool 'odd' returned `));
    expect(result.content).toEqual(expect.stringContaining(words));
    expect(result.content).toEqual(expect.stringContaining('a tool must return a string (JSON.stringify structured data) or an array of content blocks'));
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'done' })]);
    expect(warnings).toEqual([expect.stringContaining(words)]);
    // What was kept is what was sent, and the history can be sent back as it is.
    expect(runner.params.messages.at(-2)!.content).toEqual([result]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(() => JSON.stringify(runner.params.messages)).not.toThrow();
    expect(server.requests).toHaveLength(3);
    expect(next.content).toEqual([expect.objectContaining({ type: 'text', text: 'again' })]);
    expect(() => runner.toJSON()).not.toThrow();
  });

  it("a ToolError's content blocks are checked the same way", async () => {
    const thrower = tool({ name: 'odd', inputSchema: { type: 'object' }, run: () => { throw new ToolError([{ type: 'text', text: 'no', meta: 1n } as never]); } });
    const server = await mockServer([{ content: [toolUse('odd', {}, 'toolu_odd')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0, logger: captureLogger().logger }), { ...baseParams, tools: [thrower] });
    await runner;
    expect(toolResults(server.requests[1]!)[0]).toMatchObject({
      is_error: true,
      content: "Error: tool 'odd' threw a ToolError whose content is an array whose item 0 is a text block that cannot be sent as JSON (meta is a BigInt)",
    });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a toolset member's blocks are checked the same way", async () => {
    const member = { ...toolUse('screenshot', {}, 'toolu_m'), toolset_name: 'computer' };
    const server = await mockServer([{ content: [member] }, { content: [text('done')] }]);
    const computer = { type: 'computer_toolset_20260801', run: async () => [{ type: 'image', source: { type: 'base64', data: PNG } }] };
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [computer as never] });
    await runner;
    expect(toolResults(server.requests[1]!)[0]).toMatchObject({
      is_error: true,
      content: "Error: the computer toolset returned an array whose item 0 is an image block whose base64 source has no media_type for 'screenshot'; a result is a string or content blocks",
    });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('content blocks the API takes go through unchanged', () => {
  const good: Array<[string, unknown[]]> = [
    ['text, with citations and cache_control', [{ type: 'text', text: 'see', cache_control: { type: 'ephemeral' }, citations: null }]],
    ['images of each source', [
      { type: 'image', source: png },
      { type: 'image', source: { type: 'url', url: 'https://example.test/a.png' }, cache_control: { type: 'ephemeral' } },
      { type: 'image', source: { type: 'file', file_id: 'file_1' } },
    ]],
    ['documents of each source', [
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' }, title: 'A', citations: { enabled: true } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' }, context: 'ctx' },
      { type: 'document', source: { type: 'url', url: 'https://example.test/a.pdf' } },
      { type: 'document', source: { type: 'file', file_id: 'file_2' } },
      { type: 'document', source: { type: 'content', content: 'plain' } },
      { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'a' }, { type: 'image', source: png }] } },
    ]],
    ['search results', [
      { type: 'search_result', source: 'https://example.test', title: 'Example', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b', citations: null }], citations: { enabled: true } },
      { type: 'search_result', source: 'kb://1', title: '', content: [] },
    ]],
    ['a tool reference', [{ type: 'tool_reference', tool_name: 'lookup' }]],
    ['a browser state', [
      {
        type: 'browser_state',
        tabs: [{ tab_id: 't1', title: '', url: '', active: true }, { tab_id: 't2', title: 'B', url: 'https://b.test' }],
        state_changes: [{ type: 'tab_opened', tab_id: 't2' }, { type: 'download_completed', download_id: 'd', url: 'https://b.test/f', size_bytes: 3 }],
      },
      { type: 'browser_state', tabs: [], state_changes: null },
    ]],
    ['an empty array', []],
  ];

  it.each(good)('%s', async (_label, blocks) => {
    const { server, runner, result, warnings } = await callOdd(blocks);
    expect(result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_odd', content: blocks });
    expect(wire(server.requests[1]!).messages.at(-1).content[0].content).toEqual(blocks);
    expect(warnings).toEqual([]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(server.requests).toHaveLength(3);
  });

  it('what JSON leaves out (undefined) and what it turns into a string (a Date) is harmless', async () => {
    const blocks = [{ type: 'text', text: 'ok', note: undefined, at: new Date(0) }];
    const { server, runner, result, warnings } = await callOdd(blocks);
    expect(result.is_error).toBeUndefined();
    expect(wire(server.requests[1]!).messages.at(-1).content[0].content).toEqual([{ type: 'text', text: 'ok', at: '1970-01-01T00:00:00.000Z' }]);
    expect(warnings).toEqual([]);
    expect(() => runner.toJSON()).not.toThrow();
  });

  it('a value shared twice is no cycle', async () => {
    const source = { type: 'base64', media_type: 'image/png', data: PNG };
    const blocks = [{ type: 'image', source }, { type: 'image', source }];
    const { result } = await callOdd(blocks);
    expect(result.content).toEqual(blocks);
  });
});

describe('blank results: blank text goes, an error always says something (the API refuses an empty one)', () => {
  const empty = 'The tool call failed with an empty error message.';
  const blankErrors = [() => new ToolError(''), () => new ToolError([]), () => new ToolError([{ type: 'text', text: '  ' }]), () => new ToolError('\n\t')];

  it("a tool's ToolError with nothing to say: a note that it said nothing", async () => {
    for (const error of blankErrors) {
      const server = await mockServer([{ content: [toolUse('quiet', {}, 'toolu_q')] }, { content: [text('done')] }]);
      const quiet = tool({ name: 'quiet', inputSchema: { type: 'object' }, run: () => Promise.reject(error()) });
      const runner = toolRunner(server.client(), { ...baseParams, tools: [quiet] });
      await runner;
      expect(toolResults(server.requests[1]!)[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_q', is_error: true, content: empty });
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("a toolset member's blank text (in a result or a ToolError) goes as a tool's does", async () => {
    const answers: Array<[() => unknown, unknown]> = [
      [() => [{ type: 'text', text: '' }, { type: 'text', text: 'shot taken' }], [{ type: 'text', text: 'shot taken' }]],
      [() => [{ type: 'text', text: '\n\n' }], undefined],
      ...blankErrors.map((error): [() => unknown, unknown] => [() => Promise.reject(error()), empty]),
    ];
    for (const [answer, content] of answers) {
      const member = { ...toolUse('screenshot', {}, 'toolu_m'), toolset_name: 'computer' };
      const server = await mockServer([{ content: [member] }, { content: [text('done')] }]);
      const computer = { type: 'computer_toolset_20260801', run: async () => answer() };
      const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [computer as never] });
      await runner;
      expect(toolResults(server.requests[1]!)[0]!.content).toEqual(content);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });
});
