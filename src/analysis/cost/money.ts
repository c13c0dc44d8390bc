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
