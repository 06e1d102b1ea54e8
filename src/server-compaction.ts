/**
 * Server-side compaction (the `compact` beta), as `compactBeforeNextTurn()` asks for it: the rules of
 * its request, the SDK's. A compaction request returns only the compaction block, never a reply, so
 * the params that shape a reply go; the later requests keep them.
 */
import { AnthropicError } from '@anthropic-ai/sdk';

/** The run's API params for a compaction request (the SDK's rule). */
export function compactionRequestParams(apiParams: Record<string, unknown>): Record<string, unknown> {
  const { context_management: _edits, stop_sequences: _stops, output_format: _format, ...kept } = apiParams;
  const choice = (kept['tool_choice'] as { type?: unknown } | undefined)?.type;
  if (choice === 'any' || choice === 'tool') delete kept['tool_choice'];
  if (isObject(kept['output_config'])) kept['output_config'] = withoutFormat(kept['output_config']);
  if (Array.isArray(kept['fallbacks'])) {
    kept['fallbacks'] = kept['fallbacks'].map((fallback: unknown) =>
      isObject(fallback) && isObject(fallback['output_config']) ? { ...fallback, output_config: withoutFormat(fallback['output_config']) } : fallback,
    );
  }
  return kept;
}

/** `compaction` in the params would compact on every request of the loop (the SDK's error). */
export function rejectCompactionParam(params: Record<string, unknown>): void {
  if (params['compaction'] != null) {
    throw new AnthropicError(
      '`compaction` cannot be set on a tool runner: every request in the loop would compact again. Call `runner.compactBeforeNextTurn()` when the conversation should be compacted instead.',
    );
  }
}

/** The API takes no compaction request beside a compaction edit of `context_management` (the SDK's error). */
export function rejectCompactionEdit(apiParams: Record<string, unknown>): void {
  const edits = (apiParams['context_management'] as { edits?: Array<{ type?: unknown }> } | undefined)?.edits;
  if (edits?.some((edit) => typeof edit?.type === 'string' && edit.type.startsWith('compact_'))) {
    throw new AnthropicError(
      "`compactBeforeNextTurn()` can't be used while `context_management` has a compaction edit, because the API doesn't accept a compaction block together with one. Remove the edit first.",
    );
  }
}

function withoutFormat({ format: _format, ...outputConfig }: Record<string, unknown>): Record<string, unknown> {
  return outputConfig;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
