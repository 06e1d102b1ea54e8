/**
 * The Messages endpoints the testing kit's server answers: the
 * API's own (`/v1/messages` and `/v1/messages/count_tokens`, any base path before them) and Vertex
 * AI's, where the model is in the path, so that an `AnthropicVertex` client pointed at the server
 * (`baseURL`) is served like an `Anthropic` one.
 */

/** `…/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict` (or `:streamRawPredict`). */
const VERTEX = /\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(?:rawPredict|streamRawPredict)$/;

/** Vertex counts tokens on a model path of its own (the model is in the body). */
const VERTEX_COUNT_TOKENS = 'count-tokens';

/** A Messages request's route: a reply (`create`) or a token count (`count`), and the model its path names (Vertex), if any. */
export interface MessagesRoute {
  kind: 'create' | 'count';
  model: string | undefined;
}

const CREATE: MessagesRoute = Object.freeze({ kind: 'create', model: undefined });
const COUNT: MessagesRoute = Object.freeze({ kind: 'count', model: undefined });

/** The route of a POST to `path`, or `undefined` when it is no Messages endpoint. */
export function messagesRoute(path: string): MessagesRoute | undefined {
  if (path.endsWith('/v1/messages')) return CREATE;
  if (path.endsWith('/v1/messages/count_tokens')) return COUNT;
  const vertex = VERTEX.exec(path);
  if (!vertex) return undefined;
  const model = decodeURIComponent(vertex[1]!);
  return model === VERTEX_COUNT_TOKENS ? COUNT : { kind: 'create', model };
}
