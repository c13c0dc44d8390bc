/**
 * Column widths that fit a table into the room a terminal gives. Only columns marked as cuttable
 * (text) give way; figures keep their width. The widest cuttable columns are narrowed first, all
 * to one cap, so a short column (a kind, a count of markers) stays whole while a long list is cut.
 */

/** A cut column keeps one character and the ellipsis, inside cli-table3's padding. */
const NARROWEST = 4;

/**
 * `widths` are the columns' widths with their padding; `room` is what they may take together
 * (the borders already left out). Returns new widths; when even the narrowest cut columns do
 * not fit, they stay at their narrowest and the table is wider than the room.
 */
export function fitWidths(widths: number[], cuttable: boolean[], room: number): number[] {
  const total = widths.reduce((sum, w) => sum + w, 0);
  if (total <= room) return [...widths];
  const fixed = widths.reduce((sum, w, i) => sum + (cuttable[i] ? 0 : w), 0);
  const flexible = widths.filter((_, i) => cuttable[i]);
  let cap = Math.max(...flexible, NARROWEST);
  const used = (c: number) => flexible.reduce((sum, w) => sum + Math.min(w, c), 0);
  while (cap > NARROWEST && fixed + used(cap) > room) cap--;
  // What the cap leaves unused goes, a column at a time from the left, to columns it cut.
  let spare = Math.max(0, room - fixed - used(cap));
  return widths.map((w, i) => {
    if (!cuttable[i] || w <= cap) return w;
    const extra = Math.min(spare, w - cap);
    spare -= extra;
    return cap + extra;
  });
}
