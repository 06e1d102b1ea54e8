/** The inspector's listener and approver fit any runner's options, its tools typed or not. */
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { type ApprovalContext, type ToolRunnerOptions, tool, toolRunner } from 'tool-runner';
import { type Inspector, type InspectorRecord, inspector } from 'tool-runner/inspect';
import { openTelemetry } from 'tool-runner/otel';
import { createMockServer } from 'tool-runner/testing';

const sendEmail = tool({
  name: 'send_email',
  inputSchema: z.object({ to: z.string(), body: z.string() }),
  needsApproval: true,
  run: ({ to }) => `sent to ${to}`,
});

describe('tool-runner/inspect types', () => {
  it('onEvent and approve go to a runner typed by its tools, beside other listeners', async () => {
    const server = await createMockServer({ steps: [] });
    const inspect: Inspector = await inspector({ record: 'runs.jsonl', captureContent: false });
    toolRunner(server.client(), { model: 'm', max_tokens: 10, messages: [], tools: [sendEmail] }, { onEvent: inspect.onEvent, approve: inspect.approve });
    toolRunner(server.client(), { model: 'm', max_tokens: 10, messages: [] }, { onEvent: [openTelemetry(), inspect.onEvent] });
    expectTypeOf(inspect.url).toEqualTypeOf<string>();
    expectTypeOf(inspect.close).returns.toEqualTypeOf<Promise<void>>();
    // @ts-expect-error: not an option of the inspector
    await inspector({ open: true });
  });

  it('an approver gets the run signal; an approver that ignores it still fits', () => {
    expectTypeOf<ApprovalContext>().toEqualTypeOf<{ signal: AbortSignal }>();
    const withSignal: ToolRunnerOptions['approve'] = (_call, { signal }) => (signal.aborted ? { decision: 'deny' } : { decision: 'allow' });
    const without: ToolRunnerOptions['approve'] = () => ({ decision: 'allow' });
    expectTypeOf(withSignal).not.toBeUndefined();
    expectTypeOf(without).not.toBeUndefined();
  });

  it('records narrow by type', () => {
    const record = {} as InspectorRecord;
    if (record.type === 'tool.end') expectTypeOf(record.timedOut).toEqualTypeOf<true | undefined>();
    if (record.type === 'request.end') expectTypeOf(record.fallback).toEqualTypeOf<number | undefined>();
  });
});
