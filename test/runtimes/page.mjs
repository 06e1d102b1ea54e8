/** The agent programs in a browser page (`?server=BASE_URL&program=NAME`): `window.agentReport` resolves to the report (or its error). */
import { run } from './programs.mjs';

const query = new URL(location.href).searchParams;
window.agentReport = run(query.get('program'), query.get('server')).catch((error) => ({ error: `${error?.name}: ${error?.message}`, stack: error?.stack }));
