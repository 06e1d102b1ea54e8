/** Lists compared by their items. */

/** Whether two lists hold the same items (by identity) in the same order; both absent counts as the same. */
export function sameItems(a: readonly unknown[] | undefined, b: readonly unknown[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
