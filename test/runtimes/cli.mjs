/** The agent program as a command (Node, Bun, Deno): `cli.mjs BASE_URL` prints its report as one JSON line. */
import { runAgent } from './agent.mjs';

const baseURL = (globalThis.Deno?.args ?? globalThis.process?.argv.slice(2))[0];
console.log(JSON.stringify(await runAgent(baseURL)));
