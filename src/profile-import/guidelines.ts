/**
 * Which guideline line belongs to which tool. The runtime writes, as pi does: the file-operations
 * line (only with a shell and no search tool active), then each active tool's lines in tool order,
 * then the closing lines. One prompt cannot say where one tool's lines end, so a line goes to the
 * tool it names (as a whole word) and lines that name none stay with the tool before them; the lines
 * after the last naming line are the closing ones. Any split that keeps the order rebuilds the same
 * list for the same active tools; naming only decides how well it carries over to other tool sets.
 */
import { escapeRegExp } from "../text/regexp.js";

export interface GuidelineSplit {
  fileOps?: { variant: "bash" | "powershell" | "both"; line: string };
  perTool: Map<string, string[]>;
  closing: string[];
}

const SEARCH_TOOLS = ["grep", "find", "ls"];

/** `owners`: the active tools, in order, that can hold guidelines (a profile keeps them for built-ins only). */
export function splitGuidelines(
  lines: readonly string[],
  activeTools: readonly string[],
  owners: readonly string[] = activeTools,
): GuidelineSplit {
  const split: GuidelineSplit = { perTool: new Map(), closing: [] };
  const bash = activeTools.includes("bash");
  const powershell = activeTools.includes("powershell");
  let rest = [...lines];
  if ((bash || powershell) && !SEARCH_TOOLS.some((tool) => activeTools.includes(tool)) && rest.length > 0) {
    split.fileOps = { variant: bash && powershell ? "both" : bash ? "bash" : "powershell", line: rest[0]! };
    rest = rest.slice(1);
  }
  const named = rest.map((line) => namedTools(line, owners));
  const lastNaming = named.findLastIndex((tools) => tools.length > 0);
  let order = named.find((tools) => tools.length > 0)?.[0] ?? -1;
  for (const [i, line] of rest.entries()) {
    if (i > lastNaming) {
      split.closing.push(line);
      continue;
    }
    // A tool named out of order cannot own the line: the runtime writes tools' lines in tool order.
    order = named[i]!.find((at) => at >= order) ?? order;
    const owner = owners[order]!;
    split.perTool.set(owner, [...(split.perTool.get(owner) ?? []), line]);
  }
  return split;
}

/** The positions, in tool order, of the active tools the line names as a whole word. */
function namedTools(line: string, activeTools: readonly string[]): number[] {
  const names = (tool: string) => new RegExp(`(?<![\\w-])${escapeRegExp(tool)}(?![\\w-])`);
  return activeTools.flatMap((tool, at) => (names(tool).test(line) ? [at] : []));
}
