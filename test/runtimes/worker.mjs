/** The agent program as a Cloudflare Worker: `GET /?server=BASE_URL` answers with its report as JSON. */
import { runAgent } from './agent.mjs';

export default {
  async fetch(request) {
    const server = new URL(request.url).searchParams.get('server');
    try {
      return Response.json(await runAgent(server));
    } catch (error) {
      return Response.json({ error: `${error?.name}: ${error?.message}`, stack: error?.stack }, { status: 500 });
    }
  },
};
