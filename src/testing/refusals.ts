/**
 * What the API refuses in a request body before any model sees it, checked by the testing kit's
 * server so that an offline test fails where production would: a body that lacks a required field,
 * no messages, a message with empty content, a custom tool whose name the API does not take. The
 * answer is a 400 `invalid_request_error`, and no step is consumed.
 */
import { hasEmptyContent } from '../history.js';
import { API_TOOL_NAME } from '../tool-name.js';
import type { MessagesRoute } from './routes.js';

/** Why the API would refuse `body` on `route` (the message of its 400), or `undefined`; `conversation` is the whole history (a thread's continue sends only the new messages). */
export function refusal(body: unknown, route: MessagesRoute, conversation: readonly unknown[]): string | undefined {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const missing = missingField(fields, route);
  if (missing) return `${missing}: Field required`;
  if (conversation.length === 0) return 'messages: at least one message is required';
  const empty = conversation.findIndex((message, i) => hasEmptyContent((message ?? {}) as { content?: unknown }) && !(i === conversation.length - 1 && (message as { role?: unknown }).role === 'assistant'));
  if (empty !== -1) return `messages.${empty}: all messages must have non-empty content except for the optional final assistant message`;
  const tools = Array.isArray(fields['tools']) ? (fields['tools'] as unknown[]) : [];
  const named = tools.findIndex((tool) => isCustom(tool) && !API_TOOL_NAME.test(String((tool as { name?: unknown }).name)));
  if (named !== -1) return `tools.${named}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
  return undefined;
}

/** The first field the API requires on `route` that `fields` lacks (a count needs no `max_tokens`). */
function missingField(fields: Record<string, unknown>, route: MessagesRoute): string | undefined {
  if (route.model === undefined && fields['model'] === undefined) return 'model';
  if (route.kind === 'create' && fields['max_tokens'] === undefined) return 'max_tokens';
  if (fields['messages'] === undefined) return 'messages';
  return undefined;
}

/** A tool defined by the caller (no `type`, or `custom`), whose name the API checks; a server or client tool of the API has a name of its own. */
function isCustom(tool: unknown): boolean {
  const type = (tool as { type?: unknown } | null)?.type;
  return type === undefined || type === null || type === 'custom';
}
