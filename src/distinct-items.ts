/**
 * Whether an input's arrays each hold distinct items, in linear time: the JSON Schema validator checks
 * `uniqueItems` by comparing every item with every other (an array of 20,000 numbers blocked the event
 * loop for about 1.5 s), so an input whose arrays all pass is validated by the schema without it
 * (json-schema.ts), which then answers the same.
 */

/** Whether no array in `value` holds two items the validator would find equal. */
export function everyArrayDistinct(value: unknown): boolean {
  return idOf(value, new Map()) !== REPEATED;
}

/** An array that holds two equal items, found (as its id, which then ends the walk). */
const REPEATED = -1;

/**
 * A number that two values share whenever the validator finds them equal (`===`, or the same keys with equal values,
 * in any order), from a key per distinct value in `ids`: a primitive's JSON (a string's in quotes), an array's items' ids
 * and an object's sorted fields with their values' ids. A key names its children by their ids, so each costs what its
 * own items do, however deep they go (keys of whole subtrees made a deep input quadratic). Values that are not JSON (a
 * Date, NaN) may share an id without being equal: then the full check decides, as before.
 */
function idOf(value: unknown, ids: Map<string, number>): number {
  let key: string;
  if (typeof value !== 'object' || value === null) key = typeof value === 'string' ? JSON.stringify(value) : String(value);
  else if (Array.isArray(value)) {
    const items: number[] = new Array(value.length);
    const seen = new Set<number>();
    for (let index = 0; index < value.length; index++) {
      const id = idOf(value[index], ids);
      if (id === REPEATED || seen.has(id)) return REPEATED;
      seen.add(id);
      items[index] = id;
    }
    key = `[${items.join(',')}]`;
  } else {
    const names = Object.keys(value).sort();
    const fields: string[] = new Array(names.length);
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!;
      const id = idOf((value as Record<string, unknown>)[name], ids);
      if (id === REPEATED) return REPEATED;
      fields[index] = `${JSON.stringify(name)}:${id}`;
    }
    key = `{${fields.join(',')}}`;
  }
  let id = ids.get(key);
  if (id === undefined) ids.set(key, (id = ids.size));
  return id;
}
