/**
 * The Messages endpoints the testing kit's server answers: the API's own (`/v1/messages`, any base
 * path before it) and Vertex AI's, where the model is in the path, so that an `AnthropicVertex`
 * client pointed at the server (`baseURL`) is served like an `Anthropic` one.
 */

/** `…/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict` (or `:streamRawPredict`). */
const VERTEX = /\/projects\/[^/]+\/locations\/[^/]+\/publishers\/anthropic\/models\/([^/:]+):(?:rawPredict|streamRawPredict)$/;

/** A Messages request's route: the model its path names (Vertex), if any. */
export interface MessagesRoute {
  model: string | undefined;
}

const API: MessagesRoute = Object.freeze({ model: undefined });

/** The route of a POST to `path`, or `undefined` when it is no Messages endpoint. */
export function messagesRoute(path: string): MessagesRoute | undefined {
  if (path.endsWith('/v1/messages')) return API;
  const vertex = VERTEX.exec(path);
  return vertex ? { model: decodeURIComponent(vertex[1]!) } : undefined;
}
