import type { RequestRecord } from "../capture/types.js";

/**
 * Roles with the repeating tail folded: `system>user>(assistant>tool)×3`. The full list is in the
 * record; the terminal needs to fit a row.
 */
export function compactRoles(roles: string[]): string {
  const head: string[] = [];
  let i = 0;
  while (i < roles.length && !(roles[i] === "assistant" && roles[i + 1] === "tool")) head.push(roles[i++]!);
  const parts = [...head];
  while (i < roles.length) {
    let pairs = 0;
    while (roles[i] === "assistant" && roles[i + 1] === "tool") {
      pairs++;
      i += 2;
    }
    if (pairs > 0) parts.push(pairs === 1 ? "assistant>tool" : `(assistant>tool)×${pairs}`);
    else parts.push(roles[i++]!);
  }
  return parts.join(">");
}

export function markerSummary(record: RequestRecord): string {
  return Object.entries(record.markers)
    .map(([name, count]) => `${name}=${count}`)
    .join(" ");
}
