/** The words of an MCP client's failure, with the HTTP status of an answer that gave no reason. */
import { thrownMessage } from '../described.js';

/**
 * The MCP client's words for `error`. Its streamable HTTP transport says an error answer by the answer's body alone
 * (`Streamable HTTP error: Error POSTing to endpoint: <body>`), its status only in the error's `code`: an answer of no
 * body (a 401 for a token the server no longer takes, a proxy's 502) read "Error POSTing to endpoint: " and nothing
 * more, to the model and in the logs. Such words end with the status.
 */
export function mcpErrorText(error: unknown): string {
  const text = thrownMessage(error);
  const status = httpStatusOf(error);
  if (status === undefined || !/:\s*$/.test(text)) return text;
  return `${text.replace(/:\s*$/, '')}: HTTP ${status}, with no body`;
}

/** `error`, or an error of its words and the status they leave out (`mcpErrorText`), `error` its cause. */
export function withHttpStatus(error: unknown): unknown {
  const text = mcpErrorText(error);
  return text === thrownMessage(error) ? error : new Error(text, { cause: error });
}

/**
 * The status of an HTTP error answer, when `error` is the streamable HTTP transport's (its `StreamableHTTPError`, read
 * by its fields and words: importing it would load the HTTP client). An `McpError` has a `code` too, the JSON-RPC
 * error's, which a server sets as it likes (404 for a record it lacks, 503 with no message): read as a status, a whole
 * session was said lost, or an answer of no body.
 */
export function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof Error) || !error.message.startsWith('Streamable HTTP error: ')) return undefined;
  const status = (error as { code?: unknown }).code;
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : undefined;
}
