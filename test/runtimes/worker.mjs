/** The agent programs as a Cloudflare Worker: `GET /?server=BASE_URL&program=NAME` answers with the report as JSON. */
import { run } from './programs.mjs';

export default {
  async fetch(request) {
    const query = new URL(request.url).searchParams;
    try {
      return Response.json(await run(query.get('program'), query.get('server')));
    } catch (error) {
      return Response.json({ error: `${error?.name}: ${error?.message}`, stack: error?.stack }, { status: 500 });
    }
  },
};
