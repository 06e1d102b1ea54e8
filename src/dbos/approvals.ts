/**
 * Durable approvals: a run publishes the calls it waits for as a DBOS event and waits for each
 * decision as a DBOS message, so it can wait for days, across restarts, on any worker; any
 * process with `DBOS` launched or a `DBOSClient` on the same database decides.
 */
import { type ApprovalDecision, type PendingApproval, approveDecision, callIdArgument, denyDecision } from '../approval.js';

/** The event that holds the calls a run waits for (empty when it waits for none). */
export const PENDING_EVENT = 'tool-runner.pending-approvals';

/** The topic a decision about one call is sent on. */
export function decisionTopic(toolUseId: string): string {
  return `tool-runner.decision.${toolUseId}`;
}

/** A decision as it is sent: with the time it was sent (ms since the epoch, the sender's clock); none from older senders. */
export type SentDecision = ApprovalDecision & { sentAt?: number };

/** Whether a decision read by the run came after `deadline`: sent later than it (one without a time is taken). */
export function sentTooLate(decision: SentDecision, deadline: number): boolean {
  return typeof decision.sentAt === 'number' && decision.sentAt > deadline;
}

/** What deciding needs: `DBOS` (in a launched process) or a `DBOSClient`. */
export interface DurableMessenger {
  send<T>(destinationID: string, message: T, topic?: string, idempotencyKey?: string): Promise<void>;
  getEvent<T>(workflowID: string, key: string, options?: number | { timeoutSeconds?: number }): Promise<T | null>;
  /** `DBOS` and a `DBOSClient` have it: a run that ended (cancelled, say) waits for no call, whatever it published last. */
  retrieveWorkflow?(workflowID: string): { getStatus(): Promise<{ status: string } | null> };
}

/** The statuses of a run that has ended: it reads no decision again. */
const ENDED = new Set(['SUCCESS', 'ERROR', 'CANCELLED', 'MAX_RECOVERY_ATTEMPTS_EXCEEDED']);

/** The approvals of one durable run. */
export interface DurableApprovals {
  /**
   * The calls the run waits for now; waits up to `timeoutSeconds` (default 0: look once) for
   * the run to publish some.
   */
  pending(options?: { timeoutSeconds?: number }): Promise<PendingApproval[]>;
  /**
   * Lets the call run, with `input` in place of the model's (validated again). Rejects for a call the run does not wait
   * for (`pending()` lists them); sending it again before the run read the first is harmless (the first counts).
   */
  approve(toolUseId: string, options?: { input?: unknown }): Promise<void>;
  /** Denies the call: the model reads that it was denied, with the reason. */
  deny(toolUseId: string, reason?: string): Promise<void>;
}

/**
 * Approve or deny the calls a durable run waits for, from any process.
 *
 * @example
 * ```ts
 * const client = await DBOSClient.create({ systemDatabaseUrl });
 * const approvals = durableApprovals(client, 'refund-42');
 * for (const call of await approvals.pending({ timeoutSeconds: 10 })) await approvals.approve(call.id);
 * ```
 */
export function durableApprovals(dbos: DurableMessenger, workflowId: string): DurableApprovals {
  if (typeof workflowId !== 'string' || workflowId === '') throw new TypeError('durableApprovals: the workflow id must be a non-empty string');
  /** The calls the run waits for: those it published last, none once it has ended (a cancelled run's list stayed as it was). */
  const published = async (): Promise<{ calls: PendingApproval[]; ended?: string }> => {
    const calls = (await dbos.getEvent<PendingApproval[]>(workflowId, PENDING_EVENT, { timeoutSeconds: 0 })) ?? [];
    if (calls.length === 0 || typeof dbos.retrieveWorkflow !== 'function') return { calls };
    const status = (await dbos.retrieveWorkflow(workflowId).getStatus())?.status;
    return status !== undefined && ENDED.has(status) ? { calls: [], ended: status } : { calls };
  };
  // Stamped with when it was sent: a run that reads it after its deadline (no worker was alive then) takes it if it came in time.
  const decide = async (toolUseId: string, method: 'approve' | 'deny', decision: ApprovalDecision) => {
    // A call the run waits for, as runner.approve / runner.deny take (a typo's decision waited for no call, and the run
    // waited out approvalTimeoutSeconds). A call decided and not read by the run yet is still listed: sent again, harmless.
    const { calls: waiting, ended } = await published();
    if (ended) throw new Error(`${method}: run '${workflowId}' has ended (${ended}): no call of it waits for approval`);
    if (!waiting.some((call) => call.id === toolUseId)) {
      const listed = waiting.map((call) => `${call.id} (${call.name})`).join(', ') || 'none';
      throw new Error(`${method}: tool call '${toolUseId}' is not waiting for approval in run '${workflowId}'. Calls waiting for approval: ${listed}`);
    }
    await dbos.send<SentDecision>(workflowId, { ...decision, sentAt: Date.now() }, decisionTopic(toolUseId), `${workflowId}:${toolUseId}:decision`);
  };
  return {
    async pending({ timeoutSeconds = 0 } = {}) {
      const deadline = Date.now() + timeoutSeconds * 1000;
      for (;;) {
        const { calls, ended } = await published();
        if (calls.length > 0 || ended || Date.now() >= deadline) return calls;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    // Checked as runner.approve / runner.deny check them (a call for its id, a bare edit, a reason that is no string): a
    // clear rejection here, not a decision no call waits for or one the model reads as "[object Object]".
    approve: async (toolUseId, options = {}) => decide(callIdArgument(toolUseId, 'approve'), 'approve', approveDecision(options)),
    deny: async (toolUseId, reason) => decide(callIdArgument(toolUseId, 'deny'), 'deny', denyDecision(reason)),
  };
}
