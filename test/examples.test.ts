/** Every example runs offline as a user would run it, so the docs cannot rot. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

const run = promisify(execFile);
const databaseUrl = inject('databaseUrl');
const env = { ...process.env, ANTHROPIC_API_KEY: '', ANTHROPIC_LOG: 'warn', TOOL_RUNNER_DATABASE_URL: databaseUrl };
delete (env as Record<string, string | undefined>)['ANTHROPIC_API_KEY'];

async function example(name: string) {
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], { env, timeout: 30_000 });
  return { stdout, stderr };
}

describe('examples run offline', () => {
  const expectations: Record<string, RegExp[]> = {
    demo: [/offline scripted model/, /calls get_weather \{"city":"Paris"\}/, /result: 6/, /Tokyo is 6°C warmer than Paris/, /3 requests/],
    basic: [/It is 21°C in Paris\./],
    iterate: [/turn 1: \[tool_use\]/, /turn 2: \[end_turn\]/, /done after 2 requests; 4 messages/],
    'take-control': [/Berlin is cloudy/, /user → assistant → user → assistant/],
    'intercept-errors': [/stopping: 1 tool call\(s\) failed: "Error: ENOENT/],
    'modify-results': [/marked for prompt caching/, /answer: Prompt caching/],
    streaming: [/\[calling get_weather\]/, /21°C and pleasant/],
    debugging: [/the model reads: "RangeError: division by zero"/],
    testing: [/agent test passed/],
    mcp: [/tools from the MCP server: count_words/, /answer: That sentence has 5 words\./],
    otel: [
      /^span invoke_agent weather-bot \[invoke_agent\]/m,
      /^ {2}span chat claude-sonnet-5-5 \[chat\] \d+ in \/ \d+ out\n {4}span anthropic\.messages\.create \[chat\]/m,
      /^ {2}span execute_tool get_weather \[execute_tool\] get_weather\n {4}span weather-api \[app\]/m,
    ],
    compaction: [/request with 12 messages\nrequest with 3 messages/, /answer: The book is about a storm\./],
    approval: [/waiting for approval: refund \{"order":"B-2","amount":400\}/, /answer: A-1 was refunded/],
    resume: [/saved a snapshot of \d+ bytes, waiting for: deploy/, /answer: billing is live\. \(2 requests in all\)/],
    guards: [/result \(\d+ chars\): .*<\/html>/, /error  \(\d+ chars\): Error: the call to 'fetch_page' timed out after 200 ms/, /\[truncated: the result had 600013 characters; only the first 2000 are shown\]/],
    durable: [/worker 1 exited: SIGKILL/, /finished after 3 requests: Order 42 is shipped/, /"ship 42": tool ran 1 time\(s\)/, /"email about 42": tool ran 2 time\(s\)/],
    threads: [/request: thread create, 1 message\(s\) sent\nrequest: thread continue, 1 message\(s\) sent\nrequest: thread continue, 1 message\(s\) sent/, /the runner holds all 6 messages/],
    toolsets: [/computer: left_click \{"coordinate":\[640,400\]\}\ncomputer: key/, /result \(own tool\): "map at zoom 3"/, /result \(computer\): "Not executed: an earlier computer action in this turn failed\."/],
    'tool-changes': [/result: "logged in as ada"\nresult: "42 rows"\nerror : "Error: Tool 'login' not found"/, /the model was told: \[\["tool_addition","tool_removal"\]\]/],
    'image-result': [/result blocks: text, image/, /answer: The second bar is the highest, at 9\./],
    defer: [/asking before: delete_file \{"path":"\/tmp\/old.log"\}\ndeleting \/tmp\/old.log/, /answer: Deleted \/tmp\/old.log\./],
    output: [/repair turn: ".*- cities\[1\]\.temperature: /, /warmest: Paris; Oslo -3°C, Paris 21°C \(stopped by: model\)/],
    budget: [
      /result : No results\.\nnot run: repeats\nresult : Rate limits/,
      /not run: limit of 2 calls in this run \(budget\.maxCallsPerTool\)\nnot run: limit of 4000 tokens \(budget\.maxTokens; 4000 used\)/,
      /last request: tool_choice \{"type":"none"\}\nanswer: You can send 50 requests per minute per key\./,
      /stopped by: budget after 5 requests, 5000 tokens/,
    ],
    fallback: [/request 1: answered by fallback 1 \(claude-haiku-5-5\)\nrequest 2: answered by the primary/, /answer: It is 21°C in Paris\./, /requests: primary 3, backup 2/],
    inspect: [/^inspector: http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+$/m, /answer: It is sunny in Paris, and Ann knows\./, /recorded \d+ events; look at them again with: npx tool-runner inspect .*tool-runner-runs\.jsonl/],
    agents: [
      /\[papers_agent\] search_papers done/,
      /\[news_agent\] search_news done/,
      /sub-agent answered: A 2025 survey: otters crack shells with rocks\.\nsub-agent answered: Sea otters made headlines on 2026-11-30\./,
      /answer: Sea otters use rocks as tools/,
      /usage of all three agents: \d+ in \/ \d+ out over 2 requests of the lead/,
    ],
    edge: [/^200: It is 21°C in Lisbon\.$/m],
    hooks: [/→ request with 1 messages/, /result for toolu_\w+…: "\{\\"temperature\\":18\}"/, /result for toolu_\w+…: "\{\\"temperature\\":5\}"/, /over 2 requests/],
  };
  for (const [name, patterns] of Object.entries(expectations)) {
    // The durable example needs PostgreSQL, which every machine with its binaries has in the tests.
    it.skipIf(name === 'durable' && !databaseUrl)(name, async () => {
      const { stdout, stderr } = await example(name);
      for (const pattern of patterns) expect(stdout).toMatch(pattern);
      if (name === 'fallback') expect(stderr).toMatch(/The request failed on fallback 0 \(Anthropic client\) .*; sending it to fallback 1 \(Anthropic client, model 'claude-haiku-5-5'\)/);
      if (name === 'debugging') expect(stderr).toMatch(/Tool 'divide' \(toolu_\w+\) failed: RangeError: division by zero\n\s+at /);
    });
  }
});
