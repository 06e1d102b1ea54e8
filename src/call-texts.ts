/** What the model reads of a call its guards stopped, or that was never run: aborted, timed out. */
import type { StoppedOutcome } from './guards.js';

export const abortedText = (name: string) => `Error: the call to '${name}' was aborted before it finished.`;
/** An agent's call the conversation went past while a call inside its sub-agent waited: it had started, its sub-agent's finished calls ran. */
export const wentOnPastStartedText = (name: string) =>
  `Error: the conversation went on before the call to '${name}' finished (it had started: its sub-agent ran); its result was not kept.`;
/** The run was aborted before the call started (the loop body aborted on its reply, say): it never ran. */
export const abortedUnstartedText = (name: string) => `Error: the call to '${name}' was aborted before it started, so it was not run.`;
export const timedOutText = (name: string, ms: number) => `Error: the call to '${name}' timed out after ${ms} ms and was stopped.`;
/** The result text of a call its guards stopped: timed out (after `timedOut` ms), or aborted once it had started or before. */
export const stoppedText = (name: string, { timedOut, started }: StoppedOutcome) =>
  timedOut ? timedOutText(name, timedOut) : started ? abortedText(name) : abortedUnstartedText(name);
/** How a stopped call ended, as the log says it (after `Tool 'name' (id)`). */
export const stoppedForLog = ({ timedOut, started }: StoppedOutcome) => (timedOut ? `timed out after ${timedOut} ms` : started ? 'was aborted' : 'was aborted before it started');
export const stepTimedOutText = (name: string, ms: number, step: string) => `Error: the call to '${name}' timed out after ${ms} ms while ${step}, and was not run.`;
export const approvalTimedOutText = (name: string, ms: number) => `Error: the call to '${name}' timed out after ${ms} ms waiting for approval and was not run.`;
