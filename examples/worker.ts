/**
 * A Cloudflare Worker (no `nodejs_compat` needed) that answers `GET /?city=Paris` with the model's
 * answer after its tool calls. Deploy it with wrangler (`main = "examples/worker.ts"`, and the secret
 * `ANTHROPIC_API_KEY`); `examples/edge.ts` runs it offline. The same code runs on Deno, Bun, Vercel
 * Edge and in a browser page: the core imports no `node:` module and makes no code from strings.
 */
import Anthropic from '@anthropic-ai/sdk';
import { textOf, tool, toolRunner } from 'tool-runner';

interface Env {
  ANTHROPIC_API_KEY: string;
  /** Optional: another Messages-compatible server. */
  ANTHROPIC_BASE_URL?: string;
}

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  // A plain JSON Schema, validated where Workers refuse generated code.
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 }, unit: { enum: ['celsius', 'fahrenheit'], default: 'celsius' } },
    required: ['city'],
    additionalProperties: false,
  },
  run: async ({ city, unit }) => JSON.stringify({ city, unit, temperature: 21 }),
});

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const city = new URL(request.url).searchParams.get('city') ?? 'Paris';
    const client = new Anthropic({ apiKey: env.ANTHROPIC_API_KEY, baseURL: env.ANTHROPIC_BASE_URL ?? null });
    const final = await toolRunner(client, {
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: `What is the weather in ${city}?` }],
      tools: [getWeather],
    });
    return new Response(textOf(final), { headers: { 'content-type': 'text/plain; charset=utf-8' } });
  },
};
