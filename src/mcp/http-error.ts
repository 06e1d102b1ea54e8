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
  const status = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof status !== 'number' || status < 400 || status > 599 || !/:\s*$/.test(text)) return text;
  return `${text.replace(/:\s*$/, '')}: HTTP ${status}, with no body`;
}

/** `error`, or an error of its words and the status they leave out (`mcpErrorText`), `error` its cause. */
export function withHttpStatus(error: unknown): unknown {
  const text = mcpErrorText(error);
  return text === thrownMessage(error) ? error : new Error(text, { cause: error });
}
