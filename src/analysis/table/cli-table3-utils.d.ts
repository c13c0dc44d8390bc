// cli-table3 ships types for its entry only; this is the one helper table-output.ts takes from inside it.
declare module "cli-table3/src/utils.js" {
  /** Display width of a cell's text, colour codes left out. */
  export function strlen(text: string): number;
}
