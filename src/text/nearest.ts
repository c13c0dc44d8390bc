import leven, { closestMatch } from "leven";

/**
 * The known name nearest to what the user typed, for a "did you mean" hint: a typo or a transposition
 * (`reprot`, `p11`, `--jsno`), never a name that merely shares a letter or two with it.
 */
export function nearest(typed: string, known: readonly string[]): string | undefined {
  // Two edits in a word of three letters or fewer would make it any other short word.
  const maxDistance = Math.max(typed.length <= 3 ? 1 : 2, Math.floor(typed.length / 4));
  return closestMatch(typed, known, { maxDistance });
}

/**
 * Up to `count` known names nearest to `typed` by edit distance, nearest first (ties in the list's
 * order), none further than half its length (at least 3): a far name is no hint.
 */
export function nearestNames(typed: string, known: readonly string[], count: number): string[] {
  const maxDistance = Math.max(3, Math.floor(typed.length / 2));
  return known
    .map((name, index) => ({ name, index, distance: leven(typed, name) }))
    .filter((x) => x.distance <= maxDistance)
    .sort((a, b) => a.distance - b.distance || a.index - b.index)
    .slice(0, count)
    .map((x) => x.name);
}
