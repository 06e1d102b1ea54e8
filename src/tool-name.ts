/**
 * The Messages API's rule for a custom tool's name: a request with a tool it refuses fails whole,
 * with a 400, so what makes tools (`tool()`, `agentTool()`, an MCP toolset) refuses such a name
 * first, naming the tool.
 */

/** The pattern the Messages API checks each custom tool's name against. */
export const API_TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/** The rule, as an error says it. */
export const TOOL_NAME_RULE = "the Messages API takes 1 to 128 letters, digits, '_' and '-' (^[a-zA-Z0-9_-]{1,128}$)";

/** Throws a `TypeError` from `maker` (`tool()`, ...) when the API would refuse `name`. */
export function checkToolName(maker: string, name: string): void {
  if (API_TOOL_NAME.test(name)) return;
  const length = name.length > 128 ? ` (${name.length} characters)` : '';
  throw new TypeError(`${maker}: the name ${JSON.stringify(name)}${length} cannot be sent to the model: ${TOOL_NAME_RULE}`);
}
