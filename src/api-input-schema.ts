/**
 * The Messages API's rules for a custom tool's input schema beyond "an object": a request with a tool whose schema
 * it refuses fails whole, with a 400, so what makes tools (`tool()`, an MCP toolset) refuses such a schema first,
 * and the testing kit's server answers such a request with the API's 400.
 */

/** The pattern the API checks the names of an input schema's top-level properties against. */
export const API_PROPERTY_KEY = /^[a-zA-Z0-9_.-]{1,64}$/;

/** The keywords of `inputSchema`'s top level the API refuses there (`oneOf`, `allOf`, `anyOf`: it takes them inside properties). */
export function topLevelComposition(inputSchema: Record<string, unknown>): string[] {
  return ['oneOf', 'allOf', 'anyOf'].filter((keyword) => inputSchema[keyword] !== undefined);
}

/** The names of `inputSchema`'s top-level properties the API refuses (other than 1 to 64 letters, digits, `_`, `.` and `-`). */
export function refusedPropertyNames(inputSchema: Record<string, unknown>): string[] {
  const { properties } = inputSchema;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties).filter((key) => !API_PROPERTY_KEY.test(key)) : [];
}

/**
 * What the API refuses in `inputSchema`, in words (none: it takes it): `oneOf`, `allOf` or `anyOf` at the top level
 * ("input_schema does not support oneOf, allOf, or anyOf at the top level"), a property name out of its pattern
 * ("Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'").
 */
export function refusedByApi(inputSchema: Record<string, unknown>): string[] {
  const why: string[] = [];
  const composed = topLevelComposition(inputSchema);
  if (composed.length > 0) why.push(`${composed.join(', ')} at its top level (the API takes them inside properties only)`);
  const keys = refusedPropertyNames(inputSchema);
  if (keys.length > 0) why.push(`the propert${keys.length > 1 ? 'ies' : 'y'} ${keys.map((key) => JSON.stringify(key)).join(', ')} (the API takes property names of 1 to 64 letters, digits, '_', '.' and '-')`);
  return why;
}
