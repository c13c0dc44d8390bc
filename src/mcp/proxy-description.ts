/**
 * The gateway tool's description: written from the profile's texts and the servers' state, and read
 * back into those texts by `profile import`. Both directions live here so the layout — intro,
 * `Servers:` line, optional search-mode and disabled lines, `Usage:` block, precedence sentence —
 * has one owner (pi-mcp-adapter's layout; the sentences are the profile's).
 */
import type { McpTexts } from "./runtime-context.js";

type ProxyTexts = McpTexts["proxy"];

export interface ProxyDescriptionState {
  /** Enabled servers, in config order. */
  enabled: string[];
  /** Whether any enabled server puts its direct tools in search mode. */
  searchMode: boolean;
  disabled: string[];
}

const USAGE_INDENT = "  ";
const SERVERS_LABEL = "\n\nServers: ";
const USAGE_LABEL = "\n\nUsage:\n";

export function renderProxyDescription(t: ProxyTexts, state: ProxyDescriptionState): string {
  let text = t.intro;
  if (state.enabled.length > 0) text += `${SERVERS_LABEL}${state.enabled.join(", ")}`;
  if (state.searchMode) text += `\n${t.searchModeLine}`;
  if (state.disabled.length > 0) text += `\n${t.disabledLine.replace("{servers}", state.disabled.join(", "))}`;
  text += `${USAGE_LABEL}${t.usage.map((line) => `${USAGE_INDENT}${line}`).join("\n")}`;
  return `${text}\n\n${t.precedence}`;
}

/** The texts a description was written from; a line the description did not show stays undefined. */
export type ParsedProxyDescription = Pick<ProxyTexts, "intro" | "usage" | "precedence"> &
  Partial<Pick<ProxyTexts, "searchModeLine" | "disabledLine">>;

/** A comma-separated list of server names ending a line: what the disabled line ends with. */
const TRAILING_SERVER_LIST = /^(.*: )[\w.-]+(, [\w.-]+)*$/;

/** undefined when the description does not have the gateway's layout (no `Usage:` block after a paragraph). */
export function parseProxyDescription(description: string): ParsedProxyDescription | undefined {
  const usageAt = description.lastIndexOf(USAGE_LABEL);
  if (usageAt < 0) return undefined;
  const after = description.slice(usageAt + USAGE_LABEL.length);
  const precedenceAt = after.lastIndexOf("\n\n");
  if (precedenceAt < 0) return undefined;
  const usage = after.slice(0, precedenceAt).split("\n");
  if (!usage.every((line) => line.startsWith(USAGE_INDENT))) return undefined;
  const parsed: ParsedProxyDescription = {
    intro: description.slice(0, usageAt),
    usage: usage.map((line) => line.slice(USAGE_INDENT.length)),
    precedence: after.slice(precedenceAt + 2),
  };
  const serversAt = parsed.intro.indexOf(SERVERS_LABEL);
  if (serversAt < 0) return parsed;
  const [, ...extra] = parsed.intro.slice(serversAt + 2).split("\n");
  parsed.intro = parsed.intro.slice(0, serversAt);
  // The adapter writes the search-mode line before the disabled one; the disabled one ends in names.
  for (const line of extra) {
    const disabled = TRAILING_SERVER_LIST.exec(line);
    if (disabled) parsed.disabledLine = `${disabled[1]}{servers}`;
    else parsed.searchModeLine = line;
  }
  return parsed;
}
