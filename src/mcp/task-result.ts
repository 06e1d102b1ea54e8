/** A call of an MCP tool that runs only as a task (`execution.taskSupport: 'required'`, MCP's experimental tasks). */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** The result of a call made as an MCP task: its stream's last word, the result or the server's error. */
export async function taskResult(client: Client, params: { name: string; arguments: Record<string, unknown> }, options: { signal: AbortSignal; timeout?: number }): Promise<Awaited<ReturnType<Client['callTool']>>> {
  // (An MCP client older than its experimental tasks has none: the peer range goes back to 1.20.)
  const tasks = (client as Partial<Pick<Client, 'experimental'>>).experimental?.tasks;
  if (!tasks) throw new Error(`MCP tool '${params.name}' runs only as a task, which this MCP client cannot call: a newer @modelcontextprotocol/sdk (with experimental tasks) can`);
  // A call stopped (the run aborted, the call timed out) once its task exists: the task is cancelled on the server, as a
  // plain call is (notifications/cancelled). The MCP client only stops polling it, and the server's work went on.
  let taskId: string | undefined;
  let ended = false;
  const cancel = () => {
    if (taskId !== undefined && !ended) void tasks.cancelTask(taskId).catch(() => {});
  };
  options.signal.addEventListener('abort', cancel, { once: true });
  try {
    // Asked for as a task in so many words: the MCP client would ask so only for a tool in its cache, which holds the last
    // tools/list page's tools (a task tool on an earlier page was called plainly, and the server refused the call).
    for await (const message of tasks.callToolStream(params, undefined, { ...options, task: {} })) {
      if (message.type === 'taskCreated') {
        taskId = message.task.taskId;
        if (options.signal.aborted) cancel();
      }
      if (message.type === 'result') return message.result;
      if (message.type === 'error') throw message.error;
    }
  } finally {
    ended = true;
    options.signal.removeEventListener('abort', cancel);
  }
  throw new Error(`MCP tool '${params.name}': its task ended without a result`);
}
