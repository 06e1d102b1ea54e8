/**
 * A CommonJS program (`require`), run by Node and by Bun: the core and the testing kit from the
 * CommonJS build, beside the SDK's CommonJS build the program requires itself. An API error keeps the
 * SDK's class (one copy of the SDK in the program), and a run resumes from its snapshot after a tool
 * call ran in the same process. Prints what it saw as one JSON line.
 */
const Anthropic = require('@anthropic-ai/sdk');
const { tool, toolRunner, resumeToolRunner } = require('tool-runner');
const { createMockServer, text, toolUse } = require('tool-runner/testing');

(async () => {
  const params = { model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'go' }] };
  const server = await createMockServer({
    steps: [{ error: { status: 529, type: 'overloaded_error' } }, { content: [toolUse('echo', { word: 'hi' })] }, { content: [text('done')] }, { content: [text('again')] }],
  });
  const client = new Anthropic({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  const error = await toolRunner(client, params).runUntilDone().catch((thrown) => thrown);
  const echo = tool({ name: 'echo', inputSchema: { type: 'object', properties: { word: { type: 'string' } } }, run: ({ word }) => word });
  const runner = toolRunner(client, { ...params, tools: [echo] });
  await runner;
  const resumed = resumeToolRunner(client, runner.toJSON(), { tools: [echo] });
  resumed.pushMessages({ role: 'user', content: 'once more' });
  const final = await resumed;
  console.log(JSON.stringify({ error: error.constructor.name, apiError: error instanceof Anthropic.APIError, final: final.content[0].text }));
  await server.close();
})();
