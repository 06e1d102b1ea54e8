/**
 * The agent programs as a command (Node, Bun, Deno): `cli.mjs BASE_URL` prints agent.mjs's report as one
 * JSON line; `cli.mjs SERVERS features` features.mjs's (SERVERS: JSON, a server's URL by scenario).
 */
import { run } from './programs.mjs';

const [server, program] = globalThis.Deno?.args ?? globalThis.process?.argv.slice(2);
console.log(JSON.stringify(await run(program, server)));
