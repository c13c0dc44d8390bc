/** How many secrets a run's capture replaced with markers, for report, show and view. */
import type { RequestRecord } from "../capture/types.js";

export interface SecretCount {
  replaced: number;
  kinds: Record<string, number>;
}

/** The secrets replaced in a run's records (each record counts its request's and response's bodies). */
export function secretCount(records: Iterable<Pick<RequestRecord, "secrets">>): SecretCount {
  const count: SecretCount = { replaced: 0, kinds: {} };
  for (const _ of tallyingSecrets(records, count)) {
    // Each record is counted as it passes.
  }
  return count;
}

/** The records as they come, each one's secrets added to `count`: a pass that prints them counts them too. */
export function* tallyingSecrets<T extends Pick<RequestRecord, "secrets">>(
  records: Iterable<T>,
  count: SecretCount,
): Generator<T> {
  for (const record of records) {
    const { secrets } = record;
    if (secrets) {
      count.replaced += secrets.replaced;
      for (const [kind, n] of Object.entries(secrets.kinds)) count.kinds[kind] = (count.kinds[kind] ?? 0) + n;
    }
    yield record;
  }
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
    // A full line is written with two spaces before it and a comma after: 77 columns of kinds at most.
    if (line !== "" && line.length + kind.length + 2 > 77) {
      lines.push(`  ${line},`);
      line = "";
    }
    line = line === "" ? kind : `${line}, ${kind}`;
  }
  lines.push(`  ${line}`);
  return lines.join("\n");
}
