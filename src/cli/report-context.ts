/** `report --context`: the summary printed, and on stderr the requests it could not attribute. */

import { writeContextReport } from "../analysis/context/context-render.js";
import { contextSummary } from "../analysis/context/context-summary.js";
import type { RunSource } from "../analysis/load-run.js";
import type { ReportFormat } from "../analysis/report.js";
import type { LineWriter } from "../analysis/table/output.js";
import type { TableLook } from "../analysis/table/table-style.js";

export async function writeContext(source: RunSource, out: LineWriter, format: ReportFormat, look: TableLook) {
  const summary = contextSummary(source.records());
  await writeContextReport(summary, out, format, look);
  if (summary.uncounted.length > 0)
    process.stderr.write(
      `${summary.uncounted.length} request(s) carry no sources (recorded before sources were counted, or with token counting off): seq ${summary.uncounted.join(", ")}\n`,
    );
}
