/** The programs every runtime runs, by name: agent.mjs (the default) and features.mjs. */
import { runAgent } from './agent.mjs';
import { runFeatures } from './features.mjs';

export const run = (program, server) => (program === 'features' ? runFeatures(JSON.parse(server)) : runAgent(server));
