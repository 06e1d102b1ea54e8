/** A call of a server the MCP client can no longer reach as it is: which server, and that calling again will not help. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { httpStatusOf, mcpErrorText } from './http-error.js';

/**
 * Why `error`, a call's failure, means no call of the server's tools can run until the program connects it again, or
 * `undefined` when it need not: the model, told only "Not connected" or "Session not found", calls the tool again and again.
 */
export function goneError(client: Client, tool: string, error: unknown): Error | undefined {
  const name = client.getServerVersion()?.name;
  const server = `the MCP server${name ? ` '${name}'` : ''}`;
  const until = `so tool '${tool}' could not run; no call of its tools can run until the program connects it again (${mcpErrorText(error)})`;
  // The server's process ended or its connection closed: the MCP client says only "Not connected" (or "Connection closed").
  if (client.transport === undefined) return new Error(`${server} is no longer connected (its process ended, or its connection closed), ${until}`, { cause: error });
  // Streamable HTTP: a server started again (or that ended the session) answers the session's id with 404. The MCP client
  // neither starts a new session nor closes the connection, so every later call fails the same way.
  if (sessionGone(client, error)) return new Error(`${server} no longer knows this client's session (HTTP 404: it was started again, or ended the session), ${until}`, { cause: error });
  return undefined;
}

/** A 404 answer to a request of a session (the transport's, not a JSON-RPC error of code 404: `httpStatusOf`). */
function sessionGone(client: Client, error: unknown): boolean {
  const sessionId = (client.transport as { sessionId?: unknown } | undefined)?.sessionId;
  return typeof sessionId === 'string' && httpStatusOf(error) === 404;
}
