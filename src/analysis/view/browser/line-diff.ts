/** Two texts' lines aligned for side-by-side reading, by a longest common subsequence. */

/** Each row: A's line, B's line (null: a gap on that side), and whether they are the same or which side has it. */
export type DiffRow = [string | null, string | null, "same" | "add" | "del" | "chg"];

/** Above this many cells (lines of A times lines of B) the middle is paired line by line, as changed. */
const MAX_CELLS = 4e6;

/** The common prefix and suffix are cut off first: most diffs of two requests are a change in a long text. */
export function lineDiff(a: string[], b: string[]): DiffRow[] {
  let s = 0;
  while (s < a.length && s < b.length && a[s] === b[s]) s++;
  let e = 0;
  while (e < a.length - s && e < b.length - s && a[a.length - 1 - e] === b[b.length - 1 - e]) e++;
  const ma = a.slice(s, a.length - e);
  const mb = b.slice(s, b.length - e);
  const rows: DiffRow[] = [];
  for (let i = 0; i < s; i++) rows.push([a[i], b[i], "same"]);
  if (ma.length * mb.length > MAX_CELLS) {
    for (let i = 0; i < Math.max(ma.length, mb.length); i++) rows.push([ma[i] ?? null, mb[i] ?? null, "chg"]);
  } else rows.push(...alignMiddle(ma, mb));
  for (let i = a.length - e; i < a.length; i++) rows.push([a[i], b[i - a.length + b.length], "same"]);
  return rows;
}

function alignMiddle(ma: string[], mb: string[]): DiffRow[] {
  const rows: DiffRow[] = [];
  const w = mb.length + 1;
  // L[i * w + j]: the length of the longest common subsequence of ma[i..] and mb[j..].
  const L = new Uint32Array((ma.length + 1) * w);
  for (let i = ma.length - 1; i >= 0; i--)
    for (let j = mb.length - 1; j >= 0; j--)
      L[i * w + j] = ma[i] === mb[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
  let i = 0;
  let j = 0;
  while (i < ma.length || j < mb.length) {
    if (i < ma.length && j < mb.length && ma[i] === mb[j]) rows.push([ma[i++], mb[j++], "same"]);
    else if (j < mb.length && (i === ma.length || L[i * w + j + 1] >= L[(i + 1) * w + j]))
      rows.push([null, mb[j++], "add"]);
    else rows.push([ma[i++], null, "del"]);
  }
  return rows;
}
