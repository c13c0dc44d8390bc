/** The two measures the page shows a request in, tokens (our estimate) or bytes, and how it writes them. */
import type { PageRequest } from "./page-data.js";

export type Unit = "tokens" | "bytes";

/** The whole request. */
export const total = (r: PageRequest, unit: Unit): number => (unit === "tokens" ? (r.t ? r.t[3] : 0) : r.b[3]);

/** Tools, system, messages. */
export function parts(r: PageRequest, unit: Unit): [number, number, number] {
  if (unit === "tokens") return r.t ? [r.t[0], r.t[1], r.t[2]] : [0, 0, 0];
  return [r.b[0], r.b[1], r.b[2]];
}

/** The cache prefix kept from the previous loop request, or null when there is none or it was not counted. */
export const keptOf = (r: PageRequest, unit: Unit): number | null =>
  r.kept ? (unit === "tokens" ? r.kept[1] : r.kept[0]) : null;

export function fmtBytes(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KB` : `${n} B`;
}

export const fmt = (n: number | null | undefined, unit: Unit): string =>
  n === null || n === undefined ? "n/a" : unit === "tokens" ? `${n} tok` : fmtBytes(n);
