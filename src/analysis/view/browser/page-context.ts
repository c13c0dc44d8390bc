/** What the parts of one drawing of the page share: its data, and what the reader has chosen. */
import type { MarkerPattern } from "./marked-lines.js";
import type { Unit } from "./measure.js";
import type { Items, PageIndex } from "./page-data.js";

export interface PageContext extends PageIndex {
  items: Items;
  /** The probe's marker patterns, for highlighting their matches in the details. */
  markers: MarkerPattern[];
  unit: Unit;
  /** The row whose detail is open: a request, or a pair in diff mode. */
  selected: number | null;
}
