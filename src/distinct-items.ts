/**
 * Whether an input's arrays each hold distinct items, in linear time: the JSON Schema validator checks
 * `uniqueItems` by comparing every item with every other (an array of 20,000 numbers blocked the event
 * loop for about 0.4 s), so an input whose arrays all pass is validated by the schema without it
 * (json-schema.ts), which then answers the same.
 */

/** Whether no array in `value` holds two items the validator would find equal. */
export function everyArrayDistinct(value: unknown): boolean {
  return keyOf(value) !== REPEATED;
}

/** An array that holds two equal items, found (as its key, which then ends the walk). */
const REPEATED = Symbol('repeated');

/**
 * A string that two values share whenever the validator finds them equal (`===`, or the same keys with equal values,
 * in any order): a primitive's JSON (a string's in quotes), an array's items and an object's sorted fields. Values
 * that are not JSON (a Date, NaN) may share a key without being equal: then the full check decides, as before.
 */
function keyOf(value: unknown): string | typeof REPEATED {
  if (typeof value !== 'object' || value === null) return typeof value === 'string' ? JSON.stringify(value) : String(value);
  if (Array.isArray(value)) {
    const keys: string[] = new Array(value.length);
    const seen = new Set<string>();
    for (let index = 0; index < value.length; index++) {
      const key = keyOf(value[index]);
      if (key === REPEATED || seen.has(key)) return REPEATED;
      seen.add(key);
      keys[index] = key;
    }
    return `[${keys.join(',')}]`;
  }
  const names = Object.keys(value).sort();
  const fields: string[] = new Array(names.length);
  for (let index = 0; index < names.length; index++) {
    const name = names[index]!;
    const key = keyOf((value as Record<string, unknown>)[name]);
    if (key === REPEATED) return REPEATED;
    fields[index] = `${JSON.stringify(name)}:${key}`;
  }
  return `{${fields.join(',')}}`;
}
