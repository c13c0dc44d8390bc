/**
 * The fidelity table: one probe run by the runtime and by the real pi, compared on what the runtime
 * claims to mirror — how many requests, which tools in which order, the roles, where the markers
 * appear, and where the tools and system sizes stay constant or change — with the size deltas apart,
 * since the runtime's prose (and so its sizes) is its own by design.
 */
import type { RequestRecord } from "../capture/types.js";
import { compactRoles } from "./format.js";
import type { LineWriter } from "./table/output.js";
import { type NarrowStep, TableOutput } from "./table/table-output.js";
import { legendLines, narrowedLegend, PLAIN_LOOK, type TableLook } from "./table/table-style.js";

/** What one agent's run shows, each aspect as one comparable text. */
export interface AgentSide {
  requests: number;
  /** Tool names per request, runs of equal lists folded: `[read, mcp]×4`. */
  tools: string;
  /** Roles of every request, `|` between requests. */
  roles: string;
  /** Each marker's value per request: `schema 0,1,1,1; result 0,0,0,1`. */
  markers: string;
  /** Where the tools array's size changes: `constant`, or `changes at #2, #5`. */
  toolsSize: string;
  systemSize: string;
}

const ASPECTS = ["requests", "tools", "roles", "markers", "toolsSize", "systemSize"] as const;
export type Aspect = (typeof ASPECTS)[number];

export interface FidelityRow {
  probe: string;
  /** Why the probe was not run on pi (no comparison then). */
  skipped?: string;
  runtime?: AgentSide;
  pi?: AgentSide;
  /** The aspects where the two runs differ; empty is a match. */
  differs: Aspect[];
  verdict: "match" | "differs" | "finding" | "skipped";
  /** pi minus runtime, per request (when both made the same number): tools and system string lengths. */
  deltas?: { toolsChars: number[]; systemChars: number[] };
}

function folded(items: string[]): string {
  const parts: string[] = [];
  for (let i = 0; i < items.length; ) {
    let n = 1;
    while (items[i + n] === items[i]) n++;
    parts.push(n > 1 ? `${items[i]}×${n}` : items[i]!);
    i += n;
  }
  return parts.join(" → ");
}

function changePoints(values: number[]): string {
  const at = values.flatMap((v, i) => (i > 0 && v !== values[i - 1] ? [`#${i + 1}`] : []));
  return at.length === 0 ? "constant" : `changes at ${at.join(", ")}`;
}

export function agentSide(records: RequestRecord[]): AgentSide {
  const markerNames = [...new Set(records.flatMap((r) => Object.keys(r.markers)))].sort();
  return {
    requests: records.length,
    tools: folded(records.map((r) => `[${r.tools.join(", ")}]`)) || "—",
    roles: records.map((r) => compactRoles(r.roles)).join(" | "),
    markers: markerNames.map((name) => `${name} ${records.map((r) => r.markers[name] ?? 0).join(",")}`).join("; "),
    toolsSize: changePoints(records.map((r) => r.toolsChars)),
    systemSize: changePoints(records.map((r) => r.systemChars)),
  };
}

/**
 * One probe's row. `recorded` says the probe states its pi expectations apart (a known divergence,
 * named in the probe file): a difference is then a recorded finding, not an unexplained one.
 */
export function fidelityRow(
  probe: string,
  runtime: RequestRecord[],
  pi: RequestRecord[] | { skipped: string },
  recorded = false,
): FidelityRow {
  if (!Array.isArray(pi)) return { probe, skipped: pi.skipped, differs: [], verdict: "skipped" };
  const a = agentSide(runtime);
  const b = agentSide(pi);
  const differs = ASPECTS.filter((aspect) => a[aspect] !== b[aspect]);
  const deltas =
    runtime.length === pi.length
      ? {
          toolsChars: pi.map((r, i) => r.toolsChars - runtime[i]!.toolsChars),
          systemChars: pi.map((r, i) => r.systemChars - runtime[i]!.systemChars),
        }
      : undefined;
  const verdict = differs.length === 0 ? "match" : recorded ? "finding" : "differs";
  return { probe, runtime: a, pi: b, differs, verdict, deltas };
}

const signedNumber = (n: number) => (n > 0 ? `+${n}` : String(n));

/** A delta series shown short: one number when it is the same in every request. */
function deltaText(values: number[]): string {
  return new Set(values).size === 1 ? signedNumber(values[0]!) : values.map(signedNumber).join(",");
}

/** A cell comparing one aspect: the value once when both agree, else both, each on its line. */
function sideBySide(row: FidelityRow, aspect: Aspect): string {
  const a = String(row.runtime![aspect]);
  const b = String(row.pi![aspect]);
  return a === b ? a : `runtime: ${a}\npi: ${b}`;
}

/**
 * On a narrow terminal the probe and its verdict (which wraps) stay: the sizes go first, then roles,
 * markers, the tool lists, the size deltas and the request counts; --json has them all.
 */
const FIDELITY_NARROW: NarrowStep[] = [6, 5, 3, 4, 2, 7, 1].map((column) => ({ column }));
const FIDELITY_WRAP = [false, false, false, false, false, false, false, false, true];

export async function writeFidelityTable(rows: FidelityRow[], out: LineWriter, look?: TableLook): Promise<void> {
  const table = new TableOutput(
    [
      "probe",
      "requests",
      "tools per request",
      "roles",
      "markers",
      "tools size",
      "system size",
      "Δ chars pi−runtime",
      "verdict",
    ],
    {
      look,
      tone: (row, column) => (column === 8 && row[8]!.startsWith("DIFFERS") ? "red" : null),
      narrow: FIDELITY_NARROW,
      wrap: FIDELITY_WRAP,
    },
  );
  for (const row of rows) {
    if (!row.runtime || !row.pi) {
      table.push([row.probe, "", "", "", "", "", "", "", `skipped on pi: ${row.skipped ?? ""}`]);
      continue;
    }
    const deltas = row.deltas
      ? `tools ${deltaText(row.deltas.toolsChars)}\nsystem ${deltaText(row.deltas.systemChars)}`
      : "—";
    const verdict =
      row.verdict === "match"
        ? "match"
        : `${row.verdict === "finding" ? "finding" : "DIFFERS"}: ${row.differs.join(", ")}`;
    table.push([
      row.probe,
      sideBySide(row, "requests"),
      sideBySide(row, "tools"),
      row.differs.includes("roles") ? "differ (see --json)" : "same",
      sideBySide(row, "markers"),
      sideBySide(row, "toolsSize"),
      sideBySide(row, "systemSize"),
      deltas,
      verdict,
    ]);
  }
  const narrowed = narrowedLegend(table.narrowed());
  for (const line of legendLines(narrowed, look ?? PLAIN_LOOK)) await out.line(line);
  await table.write(out);
  await out.flush();
}
