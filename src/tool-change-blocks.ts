/**
 * The tool changes a history holds, read: a `system` message's `tool_addition` / `tool_removal` blocks, and those a
 * compaction block's `tool_changes` keeps of what it summarised. Read by the run's tool changes (tool-changes.ts) and by a
 * durable request's step, which records the tools a request offered (dbos/offered-tools.ts). Imports nothing.
 */

/** Calls `visit` with each tool change of `messages[from…]`, in order, by the tool's name (a change of no name is passed over). */
export function eachToolChange(messages: readonly unknown[], visit: (name: string, kind: 'addition' | 'removal') => void, from = 0): void {
  for (let i = from; i < messages.length; i++) {
    const { role, content } = (messages[i] ?? {}) as { role?: unknown; content?: unknown };
    if (!Array.isArray(content)) continue;
    for (const block of content as Array<{ type?: unknown; tool_changes?: unknown } | null | undefined>) {
      if (role === 'system') visitChange(block, visit);
      else if (role === 'assistant' && block?.type === 'compaction' && Array.isArray(block.tool_changes)) for (const change of block.tool_changes) visitChange(change, visit);
    }
  }
}

function visitChange(block: unknown, visit: (name: string, kind: 'addition' | 'removal') => void): void {
  const { type, tool } = (block ?? {}) as { type?: unknown; tool?: { type?: unknown; name?: unknown; definition?: { name?: unknown } | null } | null };
  if (type !== 'tool_addition' && type !== 'tool_removal') return;
  const name = tool?.type === 'tool_reference' ? tool.name : tool?.type === 'tool_definition' ? tool.definition?.name : undefined;
  if (typeof name === 'string') visit(name, type === 'tool_addition' ? 'addition' : 'removal');
}
