/** How many secrets a run's capture replaced with markers, for report, show and view. */
import type { RequestRecord } from "../capture/types.js";

export interface SecretCount {
  replaced: number;
  kinds: Record<string, number>;
}

/** The secrets replaced in a run's records (each record counts its request's and response's bodies). */
export function secretCount(records: Iterable<RequestRecord>): SecretCount {
  const count: SecretCount = { replaced: 0, kinds: {} };
  for (const { secrets } of records) {
    if (!secrets) continue;
    count.replaced += secrets.replaced;
    for (const [kind, n] of Object.entries(secrets.kinds)) count.kinds[kind] = (count.kinds[kind] ?? 0) + n;
  }
  return count;
}

/**
 * `secrets: 3 replaced by markers in this run's stored bodies:` and the kinds with their counts on
 * the lines below, wrapped to fit 80 columns; null when none were replaced.
 */
export function secretsNote(count: SecretCount, where = "this run's stored bodies"): string | null {
  if (count.replaced === 0) return null;
  const kinds = Object.entries(count.kinds)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([kind, n]) => `${kind} ${n}`);
  const lines = [`secrets: ${count.replaced} replaced by markers in ${where}:`];
  let line = "";
  for (const kind of kinds) {
    if (line !== "" && line.length + kind.length + 2 > 78) {
      lines.push(`  ${line},`);
      line = "";
    }
    line = line === "" ? kind : `${line}, ${kind}`;
  }
  lines.push(`  ${line}`);
  return lines.join("\n");
}
