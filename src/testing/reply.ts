/** The message a step of the testing kit's server becomes: a scripted reply, with what the API fills in (ids, usage). */
import type { BetaContainer, BetaTextBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { BetaContentBlock, BetaMessage, BetaUsage } from '../types.js';
import type { ScriptedError } from './api-errors.js';
import { apiId } from './blocks.js';

/** A text block written by hand in a step: its `citations` may be left out (the server sends `null`, as the API does). */
export type ScriptedTextBlock = Omit<BetaTextBlock, 'citations'> & { citations?: BetaTextBlock['citations'] | undefined };

/** One scripted reply of the model, and how the server delivers it. */
export interface ScriptedReply {
  /** The reply's blocks, as the API sends them (the helpers `text()`, `toolUse()`, ... make them; a text block may be written without `citations`). */
  content?: Array<BetaContentBlock | ScriptedTextBlock> | undefined;
  /** Inferred when left out: `tool_use` when the content has a tool_use block, else `end_turn`. */
  stop_reason?: BetaMessage['stop_reason'] | undefined;
  stop_sequence?: string | null | undefined;
  /**
   * Why the model stopped, in detail: a refusal's `{ category, explanation, ... }` (the fields left out
   * are sent as `null`, `type` as `'refusal'`). `null` when left out, as for any other stop.
   */
  stop_details?: Partial<NonNullable<BetaMessage['stop_details']>> | null | undefined;
  /** Merged over usage derived from the request (about 4 characters a token). */
  usage?: Partial<BetaUsage> | undefined;
  /** The container the server tool ran in: `{ id }` is sent back as the message's container. */
  container?: { id: string; expires_at?: string; skills?: BetaContainer['skills'] } | undefined;
  /** Milliseconds before the first byte. */
  delayMs?: number | undefined;
  /** Milliseconds between two SSE events. */
  eventDelayMs?: number | undefined;
  /** Characters per delta event (text, thinking, partial JSON). Default 16. */
  chunkSize?: number | undefined;
  /** Answer with this error instead. The step is consumed, so a client retry meets the next step. */
  error?: ScriptedError | undefined;
  /** Drop the connection after this many SSE events (after the last, when the reply has fewer), or before the JSON body. */
  disconnectAfterEvents?: number | undefined;
  /** Send a body (JSON) or an event (SSE) that is not valid JSON. */
  malformed?: boolean | undefined;
  /**
   * Stop sending after this many SSE events (after the last, when the reply has fewer), or before the
   * JSON body, and hold the connection open until the client closes it.
   */
  stallAfterEvents?: number | undefined;
}

export function buildMessage(reply: ScriptedReply, body: any, conversation: unknown[], routeModel: string | undefined): BetaMessage {
  // A text block written without `citations` gets them `null`, as the API sends every text block.
  const content = (reply.content ?? []).map((block) => (block.type === 'text' && block.citations === undefined ? { ...block, citations: null } : block));
  const stop_reason = reply.stop_reason ?? (content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
  return {
    id: apiId('msg'),
    type: 'message',
    role: 'assistant',
    model: answeringModel(content) ?? (typeof body?.model === 'string' ? body.model : (routeModel ?? 'mock-model')),
    content,
    stop_reason,
    stop_sequence: reply.stop_sequence ?? null,
    stop_details: reply.stop_details ? { ...NO_STOP_DETAILS, ...reply.stop_details } : null,
    // (`skills` as the API sends it for a container that loaded none.)
    container: reply.container ? { expires_at: new Date(Date.now() + 3_600_000).toISOString(), skills: null, ...reply.container } : null,
    usage: { ...derivedUsage(body, conversation, content), ...reply.usage },
    context_management: null,
    diagnostics: null,
  } as unknown as BetaMessage;
}

/** A refusal's details as the API sends them when it has none to give: every field there, `null`. */
const NO_STOP_DETAILS = {
  type: 'refusal',
  category: null,
  explanation: null,
  fallback_credit_token: null,
  fallback_has_prefill_claim: null,
  recommended_model: null,
} satisfies NonNullable<BetaMessage['stop_details']>;

/** The prompt's tokens: about 4 characters a token, over the whole conversation, as the model sees it. */
export function inputTokens(body: any, conversation: unknown[]): number {
  return Math.ceil(JSON.stringify([body?.system ?? '', body?.tools ?? [], conversation]).length / 4);
}

/** About 4 characters a token, as a rough tokenizer would count. */
function derivedUsage(body: any, conversation: unknown[], content: unknown[]): BetaUsage {
  return {
    input_tokens: inputTokens(body, conversation),
    output_tokens: Math.max(1, Math.ceil(JSON.stringify(content).length / 4)),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    // The fields the SDK types as required but nullable, as the API sends them.
    cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
    fallback_credit: null,
    inference_geo: null,
    iterations: null,
    output_tokens_details: null,
    server_tool_use: serverToolUsage(content),
    service_tier: 'standard',
    speed: null,
  };
}

/** The server tools the API bills a reply for: `web_search` and `web_fetch` calls it answered (an error result is not billed); `null` for none, as the API sends it. */
function serverToolUsage(content: unknown[]): BetaUsage['server_tool_use'] {
  const blocks = content as Array<{ type?: unknown; id?: unknown; name?: unknown; tool_use_id?: unknown; content?: unknown }>;
  const usage = { web_search_requests: 0, web_fetch_requests: 0 };
  for (const call of blocks) {
    if (call.type !== 'server_tool_use' || (call.name !== 'web_search' && call.name !== 'web_fetch')) continue;
    const result = blocks.find((block) => block.type === `${call.name}_tool_result` && block.tool_use_id === call.id);
    if (!result || (result.content as { type?: unknown } | null)?.type === `${call.name}_tool_result_error`) continue;
    if (call.name === 'web_search') usage.web_search_requests++;
    else usage.web_fetch_requests++;
  }
  return usage.web_search_requests + usage.web_fetch_requests > 0 ? usage : null;
}

/**
 * The model a reply handed to a fallback model (a `fallback` block, after a refusal) is labelled with: the last hop's, as
 * the API labels it, and as the SDK's stream makes it of the block (the stream and the whole reply of a step must agree).
 */
function answeringModel(content: unknown[]): string | undefined {
  let model: string | undefined;
  for (const block of content as Array<{ type?: unknown; to?: { model?: unknown } }>) {
    if (block.type === 'fallback' && typeof block.to?.model === 'string') model = block.to.model;
  }
  return model;
}
