/** Dollars as every output shows them: tables, lines, JSON and the viewer. */

/**
 * The one precision rule for dollars, in every output: four significant digits under a cent (a
 * request's figure is never `$0.00`), whole cents from a cent up. JSON carries the same rounded
 * number the tables print.
 */
export function roundDollars(amount: number): number {
  const abs = Math.abs(amount);
  if (abs === 0) return 0;
  return abs < 0.01 ? Number(amount.toPrecision(4)) : Math.round(amount * 100) / 100;
}

/** `$0.003142`, `$0.15`, `$12.35`, `-$0.0045`: roundDollars, printed. */
export function dollars(amount: number): string {
  const rounded = roundDollars(amount);
  const sign = rounded < 0 ? "-" : "";
  const abs = Math.abs(rounded);
  if (abs === 0) return "$0";
  if (abs >= 0.01) return `${sign}$${abs.toFixed(2)}`;
  // Written out in decimals, never as 1e-7: the places four significant digits need, trailing zeros dropped.
  const places = Math.min(20, 3 - Math.floor(Math.log10(abs)));
  return `${sign}$${abs.toFixed(places).replace(/0+$/, "")}`;
}

/** The decimal places `dollars` prints an amount with (trailing zeros dropped). */
const placesOf = (amount: number) => dollars(amount).split(".")[1]?.length ?? 0;

/**
 * Amounts shown side by side (A, B and their difference), all at the places the finest of them needs,
 * so the figures on a line add up as printed: `A $0.007712 B $0.014112 (+$0.006400)`. The difference
 * is taken between the amounts as printed.
 */
export function dollarsSideBySide(a: number | null, b: number | null): { a: string; b: string; delta: string } {
  const shown = [a, b].filter((x): x is number => x !== null);
  const places = Math.max(2, ...shown.map(placesOf));
  const at = (x: number) => Math.round(x * 10 ** places) / 10 ** places;
  const text = (x: number) => `${x < 0 ? "-" : ""}$${Math.abs(x).toFixed(places)}`;
  if (a === null || b === null)
    return { a: a === null ? "—" : text(at(a)), b: b === null ? "—" : text(at(b)), delta: "—" };
  const delta = at(b) - at(a);
  return { a: text(at(a)), b: text(at(b)), delta: `${delta > 0 ? "+" : ""}${text(delta)}` };
}

/** Fields of cost JSON that hold dollars; numbers under them are rounded by roundDollars. */
const DOLLAR_FIELDS = new Set(["predictedCost", "reportedCost", "predicted", "reported", "dollars", "a", "b", "delta"]);

/** A JSON.stringify replacer that rounds dollar figures as the tables print them. */
export function moneyJson(key: string, value: unknown): unknown {
  return typeof value === "number" && DOLLAR_FIELDS.has(key) ? roundDollars(value) : value;
}

export const PRICE_UNKNOWN = "price unknown";

/** Dollars, or "price unknown" for a model the table does not price. */
export function money(amount: number | null): string {
  return amount === null ? PRICE_UNKNOWN : dollars(amount);
}
