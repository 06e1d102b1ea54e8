/**
 * The type of `runner.toJSON()`: `RunnerSnapshot<Stream>` of the runner's own `Stream`, for a literal `Stream` and a
 * generic one, while `ToolRunner<boolean>` stays assignable to `ToolRunner<true>` and `ToolRunner<false>` (as the SDK's
 * `BetaToolRunner<boolean>` is: test/sdk-1-14.test-d.ts). The declaration and what it costs: `toJSON` in src/runner.ts.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expectTypeOf, it } from 'vitest';
import { type RunnerSnapshot, ToolRunner, resumeToolRunner, toolRunner } from 'tool-runner';

declare const client: Anthropic;
const params = { model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [] };

describe("runner.toJSON()'s type", () => {
  it('in generic code: a ToolRunner<S> gives a RunnerSnapshot<S>, which resumes as a ToolRunner<S>', () => {
    // Each was TS2322 (`SameStream<S>` is not assignable to `S`) while toJSON() returned a conditional type.
    function keep<S extends boolean>(runner: ToolRunner<S>): RunnerSnapshot<S> {
      return runner.toJSON();
    }
    function retry<S extends boolean>(runner: ToolRunner<S>): ToolRunner<S> {
      return resumeToolRunner(client, runner.toJSON());
    }
    function keepTyped<S extends boolean, Output>(runner: ToolRunner<S, Output>): RunnerSnapshot<S> {
      return runner.toJSON();
    }
    const streamed = toolRunner(client, { ...params, stream: true });
    expectTypeOf(keep(streamed)).toEqualTypeOf<RunnerSnapshot<true>>();
    expectTypeOf(retry(streamed)).toEqualTypeOf<ToolRunner<true>>();
    expectTypeOf(keepTyped(toolRunner(client, params))).toEqualTypeOf<RunnerSnapshot<false>>();
    expectTypeOf(<R extends ToolRunner<boolean>>(runner: R) => runner.toJSON()).returns.toEqualTypeOf<RunnerSnapshot<boolean>>();
  });

  it("keeps the stream flag through resumeToolRunner, from the snapshot and from a copy of it with fields changed", () => {
    const streamed = toolRunner(client, { ...params, stream: true });
    const snapshot = streamed.toJSON();
    expectTypeOf(snapshot).toEqualTypeOf<RunnerSnapshot<true>>();
    expectTypeOf(resumeToolRunner(client, streamed.toJSON())).toEqualTypeOf<ToolRunner<true>>();
    expectTypeOf(resumeToolRunner(client, { ...snapshot, iteration: 2 })).toEqualTypeOf<ToolRunner<true>>();
    expectTypeOf(toolRunner(client, params).toJSON()).toEqualTypeOf<RunnerSnapshot<false>>();
    expectTypeOf(resumeToolRunner(client, JSON.parse('{}') as RunnerSnapshot)).toEqualTypeOf<ToolRunner<boolean>>();
    // A subclass's snapshot is its base's.
    class Streaming extends ToolRunner<true> {}
    expectTypeOf(new Streaming(client, { ...params, stream: true }).toJSON()).toEqualTypeOf<RunnerSnapshot<true>>();
  });

  it('ToolRunner<boolean> is assignable to ToolRunner<true> and ToolRunner<false>; ToolRunner<true> is not to ToolRunner<false>', () => {
    const open = toolRunner(client, { ...params, stream: Math.random() > 0.5 });
    expectTypeOf(open.toJSON()).toEqualTypeOf<RunnerSnapshot<boolean>>();
    const streaming: ToolRunner<true> = open;
    const whole: ToolRunner<false> = open;
    const either: ToolRunner<boolean> = streaming;
    // @ts-expect-error: a streaming runner is not a runner of messages.
    const wrong: ToolRunner<false> = streaming;
    // @ts-expect-error: nor is its snapshot a snapshot of one.
    const wrongSnapshot: RunnerSnapshot<false> = streaming.toJSON();
    void [whole, either, wrong, wrongSnapshot];
  });

  it('is callable on a ToolRunner<true> | ToolRunner<false> (a runner picked by a condition)', () => {
    const runner = Math.random() > 0.5 ? toolRunner(client, { ...params, stream: true }) : toolRunner(client, params);
    // One snapshot of either: its `stream` is either.
    expectTypeOf(runner.toJSON()).toEqualTypeOf<RunnerSnapshot<boolean>>();
    expectTypeOf(resumeToolRunner(client, runner.toJSON())).toEqualTypeOf<ToolRunner<boolean>>();
  });

  it('is not callable detached from its runner (it reads the runner: it would throw)', () => {
    const runner = toolRunner(client, params);
    const detached = runner.toJSON;
    // @ts-expect-error: the 'this' context of type 'void' is not assignable.
    void detached();
  });

  it('the cost: ReturnType of toJSON is RunnerSnapshot<boolean> (name RunnerSnapshot<true> for a streaming run)', () => {
    // `Same` (the snapshot's Stream) is read off `this`, which ReturnType does not bind: it takes `Same`'s bound.
    expectTypeOf<ReturnType<ToolRunner<true>['toJSON']>>().toEqualTypeOf<RunnerSnapshot<boolean>>();
  });
});
