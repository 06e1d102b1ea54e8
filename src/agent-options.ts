/**
 * An agent tool's options (`agentTool({ options })`), checked as `toolRunner` checks a run's: when the tool is made, and,
 * for an agent that runs on the parent's client, again against that client when the parent's run is made (an option of
 * the caller's own passes only when middleware can read it). Either way, before the model could read the mistake as the
 * tool's result at its first call.
 */
import { type ToolRunnerOptions, checkOptions, checkedFor } from './options.js';
import { RunOutput } from './output.js';
import { checkRunControlOptions } from './run-control-options.js';

/** `client`: the sub-agent's own, or the parent's; `undefined` while it is not known (an option of the caller's own passes then). */
export function checkSubOptions(name: string, options: ToolRunnerOptions, client: unknown): void {
  checkedFor(`agentTool '${name}': options: `, () => {
    if (Array.isArray(options)) throw new TypeError('toolRunner: options must be an object');
    checkOptions(options, client);
    checkRunControlOptions(options);
    // Its schema compiled as the sub-agent's run would compile it.
    if (options.output !== undefined) new RunOutput(options.output, 0);
  });
}
