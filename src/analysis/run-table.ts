import Table from "cli-table3";
import type { RequestRecord } from "../capture/types.js";
import { compactRoles, markerSummary } from "./format.js";

/** One row per request: what `payload-probe run` prints after a probe. */
export function renderRunTable(records: RequestRecord[]): string {
  const table = new Table({
    head: ["seq", "kind", "tools", "toolsBytes", "systemBytes", "roles", "markers"],
    style: { head: [], border: [] },
  });
  for (const r of records) {
    table.push([
      r.seq,
      r.kind,
      `${r.tools.length} [${r.tools.join(", ")}]`,
      r.toolsBytes,
      r.systemBytes,
      compactRoles(r.roles),
      markerSummary(r),
    ]);
  }
  return table.toString();
}
