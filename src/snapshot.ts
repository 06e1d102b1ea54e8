/** Pause and resume: what a JSON snapshot of a run holds (`resumeToolRunner` continues one: resume.ts). */
import type { ApprovalDecision, PendingApproval } from './approval.js';
import type { BudgetJSON } from './budget.js';
import type { LoopGuardJSON } from './loop-guard.js';
import type { OutputJSON } from './output.js';
import type { ParamsWithoutTools } from './settings.js';
import type { LimitStop, StoppedBy } from './stop-reason.js';
import type { ThreadSnapshot } from './thread.js';
import type { BetaCompactionConfig, BetaMessage, BetaToolResultBlockParam, BetaToolUnion } from './types.js';
import type { Usage } from './usage.js';

export const SNAPSHOT_VERSION = 1;

/** What `runner.toJSON()` returns: plain JSON, safe to store and send to another process. */
export interface RunnerSnapshot<Stream extends boolean = boolean> {
  version: typeof SNAPSHOT_VERSION;
  /** The params without tools: API params, runner settings and the history (`stream` keeps the runner's yield type on resume). */
  params: ParamsWithoutTools & { stream?: Stream | undefined };
  /** Runnable tools by name (supplied again on resume), plain definitions as they are. */
  tools: Array<{ runnable: string } | { definition: BetaToolUnion } | { source: true } | { toolset: string }>;
  iteration: number;
  usage: Usage;
  /** Tool calls never to run (cut off by max_tokens, repeated ids), with the error that answers them. */
  notRun: Record<string, string>;
  calls: ToolCallsJSON;
  /** `addTools` / `removeTools` so far: runnable tools by name (supplied again on resume). */
  toolChanges?: ToolChangesJSON;
  /** The message thread the run continues, if it runs over one (a resumed run continues it). */
  thread?: ThreadSnapshot;
  /** Why the run stopped, if it had when the snapshot was taken (a resumed runner says so until iterated). */
  stoppedBy?: StoppedBy;
  /** The last reply: what a resumed run resolves to if it stops before another. */
  lastMessage?: BetaMessage;
  /** Run control (`options.output`, `budget`, `loopGuard`): the output, the calls counted, a stop decided. */
  control?: RunControlJSON;
  /** Compaction's state, when it is not the start's: client-side compaction just done or off, a server-side one scheduled. */
  compaction?: CompactionJSON;
  /** The requests sent so far: a resumed run numbers its next (`requestId` in events) after them. */
  requests?: number;
  /**
   * Messages the caller appended while the last reply came (late-change.ts), `count` of them from `at` in the history, right
   * before that reply until its calls are answered: the resumed run places them after the results, as the run would have.
   */
  late?: { at: number; count: number };
}

/** What a snapshot keeps of compaction (compactions.ts). */
export interface CompactionJSON {
  /** `compactionControl`: `'just-compacted'` (the next reply tells whether the summary helped), or `'off'` for the rest of the run. */
  trigger?: 'just-compacted' | 'off';
  /** A server-side compaction `compactBeforeNextTurn()` scheduled, not yet adopted: the resumed run sends it. */
  scheduled?: BetaCompactionConfig;
  /** With `scheduled`: the run had ended (on its answer, or at a limit) and this compaction, its last request, failed: the resumed run sends it and ends so. */
  ending?: StoppedBy;
  /** The last reply stopped for approval: once its calls are answered, its usage decides whether to compact. */
  owed?: true;
}

/** What a snapshot keeps of run control (the options themselves are supplied again on resume). */
export interface RunControlJSON {
  output?: OutputJSON;
  budget?: BudgetJSON;
  loopGuard?: LoopGuardJSON;
  /** A stop a call decided, not made yet. */
  pending?: LimitStop;
  /** The calls admitted of the replies of one iteration (a call waiting for approval is not admitted twice). */
  admitted?: { iteration: number; ids: string[] };
  /** The run ended on the answer it gave at its limit (`onLimit: 'answer'`), the history's last message: resumed, it ends on it. */
  answered?: true;
  /** The final reply, the history's last message, whose output was not read (the schema's code threw, the run aborted), and why the run would end on it: resumed, it is read again. */
  unread?: 'model' | LimitStop;
}

/** What a snapshot keeps of the calls. */
export interface ToolCallsJSON {
  /** Results of calls that finished, by tool_use id. */
  settled: Record<string, BetaToolResultBlockParam>;
  /** Calls that waited for approval (decided or not), as they were held. */
  held: HeldCall[];
  /** Ids of the held calls still waiting. */
  pending: string[];
  decisions: Record<string, ApprovalDecision>;
  /** Results of calls whose tool finished before a hook threw: the resumed run runs only the hook again. */
  ran?: Record<string, BetaToolResultBlockParam>;
}

/** What a snapshot keeps of the tool changes (`addTools` / `removeTools`). */
export interface ToolChangesJSON {
  /** Per name: the runnable tool added under it, or `null` (removed, or taken by a plain definition). */
  overrides: Record<string, { runnable: string } | null>;
  /** Changes not yet sent to the model. */
  pending: Array<{ type: 'addition'; runnable: string } | { type: 'addition'; definition: BetaToolUnion } | { type: 'removal'; name: string }>;
}

/** A call that waits for approval: its own, or (`agent`) a sub-agent's calls, with the sub-agent's state. */
export interface HeldCall extends PendingApproval {
  /**
   * `counted`: the sub-agent ran when the snapshot was taken, and the parent's usage holds this much
   * of its own (none held: it waited for approval, and the parent's usage holds all it spent).
   */
  agent?: { snapshot: RunnerSnapshot; counted?: Usage };
  /** The input the `onToolCall` hook gave in place of the model's: what the call is validated from again when it goes on. */
  given?: unknown;
}
