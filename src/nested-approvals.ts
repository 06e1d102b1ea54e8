/**
 * Approvals inside sub-agents (`agentTool`): a sub-agent that stopped for approval holds its call
 * in the parent, with the sub-agent's state. The parent lists the sub-agent's waiting calls in its
 * own place (with their `path`), and a decision about one goes into that state; once none waits,
 * the parent's call goes on (the sub-agent resumes from its state).
 */
import type { ApprovalDecision, PendingApproval } from './approval.js';
import type { HeldCall } from './snapshot.js';

/**
 * The calls waiting for a decision: a sub-agent's in place of the call that runs it, each with its
 * `path` (the agents' names) and `callPath` (the ids of the calls that started them).
 */
export function openApprovals(waiting: readonly HeldCall[], path?: string[], callPath?: string[]): PendingApproval[] {
  const open: PendingApproval[] = [];
  for (const call of waiting) {
    if (call.agent) {
      open.push(...openApprovals(waitingIn(call), [...(path ?? []), call.name], [...(callPath ?? []), call.id]));
      continue;
    }
    const { agent: _agent, given: _given, ...own } = call;
    open.push(path && callPath ? { ...own, path, callPath } : own);
  }
  return open;
}

/** Whether a held call is a sub-agent's (its decisions go inside it). */
export function isAgentCall(call: HeldCall): boolean {
  return call.agent !== undefined;
}

/**
 * Records a decision about a call waiting inside the sub-agent `call` holds (at any depth):
 * `'not-found'`, `'waiting'` (other calls still wait inside), or `'decided'` (none waits: the
 * sub-agent can go on).
 */
export function decideInside(call: HeldCall, id: string, decision: ApprovalDecision): 'not-found' | 'waiting' | 'decided' {
  const calls = call.agent!.snapshot.calls;
  for (const held of waitingIn(call)) {
    if (held.agent) {
      const inside = decideInside(held, id, decision);
      if (inside === 'not-found') continue;
      if (inside === 'waiting') return 'waiting';
      // Allowed already with an edited input (before its sub-agent stopped): it goes on with it.
      if (calls.decisions[held.id]?.decision !== 'allow') calls.decisions[held.id] = { decision: 'allow' };
    } else if (held.id === id) {
      calls.decisions[id] = decision;
    } else continue;
    calls.pending = calls.pending.filter((pending) => pending !== held.id);
    return calls.pending.length === 0 ? 'decided' : 'waiting';
  }
  return 'not-found';
}

function waitingIn(call: HeldCall): HeldCall[] {
  const calls = call.agent!.snapshot.calls;
  return calls.pending.map((id) => calls.held.find((held) => held.id === id)).filter((held): held is HeldCall => held !== undefined);
}
