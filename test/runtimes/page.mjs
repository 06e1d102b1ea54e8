/** The agent program in a browser page: `window.agentReport` resolves to its report (or its error). */
import { runAgent } from './agent.mjs';

const server = new URL(location.href).searchParams.get('server');
window.agentReport = runAgent(server).catch((error) => ({ error: `${error?.name}: ${error?.message}`, stack: error?.stack }));
