/**
 * tool-runner/testing: test agents offline against a local Messages API server driven by a
 * scripted model, with the real SDK client over real HTTP.
 */
export { createMockServer } from './server.js';
export type { MockServer, MockServerOptions, RecordedBody, RecordedRequest, Step } from './server.js';
export type { ScriptedReply, ScriptedTextBlock } from './reply.js';
export type { ScriptedError } from './api-errors.js';
export { apiId, serverToolUse, text, thinking, toolUse, webSearchResult } from './blocks.js';
export { historyProblems } from '../history-problems.js';
export { blocksOf, toolResults } from './reading.js';
