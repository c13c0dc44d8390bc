/**
 * Sources gathered into the few groups a chart can tell apart: each system part is "system", each
 * instruction file "instructions", a skill's body and its index entry "skills", the agent's own and
 * namespaced tools "tools", every tool result "results". An MCP server stays a group of its own: what
 * one server costs is the question the chart answers (issue 41). The rest (`history`, `reasoning`,
 * `image`, `document`, `overhead`, `mcp-adapter`) are groups as they are.
 */
const PREFIX_GROUPS: [prefix: string, group: string][] = [
  ["system[", "system"],
  ["instructions:", "instructions"],
  ["skill:", "skills"],
  ["skill-index:", "skills"],
  ["tools:", "tools"],
  ["result:", "results"],
];

export function sourceGroup(source: string): string {
  for (const [prefix, group] of PREFIX_GROUPS) if (source.startsWith(prefix)) return group;
  return source;
}
