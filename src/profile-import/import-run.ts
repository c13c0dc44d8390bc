/**
 * `profile import`: the texts a captured run's requests show the model, recovered into a profile
 * the runtime can run with. The tools come from every request (first definition of each name
 * wins), the system prompt template from the first request that has one, snippets from every
 * request's tool list. What no request showed is written empty and named in `notRecovered`.
 */
import type { RunSource } from "../analysis/load-run.js";
import { UserError } from "../errors.js";
import { namespaceToolName } from "../mcp/naming.js";
import { parseProxyDescription } from "../mcp/proxy-description.js";
import type { McpTexts } from "../mcp/runtime-context.js";
import { codecFor } from "../providers/codecs.js";
import type { ToolTexts } from "../runtime/profile.js";
import { BUILTIN_ORDER } from "../runtime/tools/builtin.js";
import { splitGuidelines } from "./guidelines.js";
import { type InferredPrompt, inferTemplate } from "./system-template.js";
import { parameterDescriptions, type SentTool, sentTool } from "./wire-tool.js";

export interface NotRecovered {
  /** The profile field left empty, dotted (`skills.useBash`). */
  field: string;
  why: string;
}

export interface ImportSummary {
  run: string;
  /** Loop requests read (sampling and pass-through requests show no tools or prompt of the agent). */
  requests: number;
  tools: { name: string; as: string; snippet: boolean; guidelines: number }[];
  template: { lines: number; placeholders: string[] };
  skillsPreamble: boolean;
  notRecovered: NotRecovered[];
  /** Template caveats and tools the runtime has no place for. */
  notes: string[];
}

interface Capture {
  tools: Map<string, SentTool>;
  /** The first request's tool names and system text; every request's tool-list snippets. */
  first: { toolNames: string[]; system: string };
  snippets: Map<string, string>;
  requests: number;
}

function readCapture(source: RunSource): Capture {
  if (!source.hasPayloads)
    throw new UserError(`run ${source.label} kept no wire bodies (payloads.jsonl): there is nothing to import`);
  const capture: Capture = { tools: new Map(), first: { toolNames: [], system: "" }, snippets: new Map(), requests: 0 };
  for (const payload of source.payloads()) {
    if (payload.api === null || payload.kind !== "loop") continue;
    const d = codecFor(payload.api).dissect(payload.body);
    const tools = d.tools.map((t) => sentTool(t.json));
    for (const tool of tools) if (!capture.tools.has(tool.name)) capture.tools.set(tool.name, tool);
    const system = d.systemParts.join("\n");
    if (capture.requests === 0) capture.first = { toolNames: tools.map((t) => t.name), system };
    for (const [name, snippet] of inferTemplate(
      system,
      tools.map((t) => t.name),
    ).snippets)
      if (!capture.snippets.has(name)) capture.snippets.set(name, snippet);
    capture.requests++;
  }
  if (capture.requests === 0)
    throw new UserError(
      `run ${source.label} has no agent requests (loop requests with a wire body): nothing to import`,
    );
  return capture;
}

export function importProfile(source: RunSource, name: string): { profile: object; summary: ImportSummary } {
  const capture = readCapture(source);
  const prompt = inferTemplate(capture.first.system, capture.first.toolNames);
  // Only built-in tools carry guidelines in a profile, so only they can own a line.
  const split = splitGuidelines(
    prompt.guidelines ?? [],
    capture.first.toolNames,
    capture.first.toolNames.filter((t) => (BUILTIN_ORDER as readonly string[]).includes(t)),
  );
  const missing: NotRecovered[] = [];
  const summary: ImportSummary = {
    run: source.label,
    requests: capture.requests,
    tools: [],
    template: { lines: prompt.template.length, placeholders: placeholdersIn(prompt.template) },
    skillsPreamble: prompt.skillsPreamble !== undefined,
    notRecovered: missing,
    notes: [...prompt.notes],
  };
  const fileOps = { bash: "", powershell: "", both: "" };
  if (split.fileOps) fileOps[split.fileOps.variant] = split.fileOps.line;
  for (const variant of ["bash", "powershell", "both"] as const)
    if (!fileOps[variant])
      missing.push({ field: `systemPrompt.fileOpsGuideline.${variant}`, why: "no request had that shell set-up" });

  const tools: Record<string, ToolTexts> = {};
  for (const builtin of BUILTIN_ORDER) {
    const sent = capture.tools.get(builtin);
    if (!sent) missing.push({ field: `tools.${builtin}`, why: "no request sent this tool" });
    tools[builtin] = toolTexts(sent, capture.snippets.get(builtin), split.perTool.get(builtin));
    if (sent) summary.tools.push(toolRow(builtin, "built-in", tools[builtin]!));
  }
  const mcp = mcpTexts(capture, missing, summary);
  for (const toolName of capture.tools.keys())
    if (!summary.tools.some((t) => t.name === toolName))
      summary.notes.push(`tool ${toolName}: not one the runtime or its MCP adapter defines; its texts are not kept`);

  const profile = {
    name,
    about: `Imported by payload-probe profile import from ${source.label} (${capture.requests} requests). The texts are that agent's, not payload-probe's.`,
    imported: { from: source.label, requests: capture.requests, notRecovered: missing },
    systemPrompt: { template: prompt.template, fileOpsGuideline: fileOps, closingGuidelines: split.closing },
    tools,
    skills: skillsTexts(prompt, capture.first.toolNames, missing),
    extensions: mcp ? { mcp } : {},
  };
  return { profile, summary };
}

function placeholdersIn(template: string[]): string[] {
  return [...new Set(template.join("\n").match(/\{[A-Z]+\}/g) ?? [])];
}

function toolTexts(sent: SentTool | undefined, snippet?: string, guidelines?: string[]): ToolTexts {
  if (!sent) return { description: "", parameters: {} };
  return {
    description: sent.description,
    ...(snippet === undefined ? {} : { snippet }),
    guidelines: guidelines ?? [],
    parameters: parameterDescriptions(sent.parameters),
  };
}

function toolRow(name: string, as: string, t: ToolTexts): ImportSummary["tools"][number] {
  return { name, as, snippet: t.snippet !== undefined, guidelines: t.guidelines?.length ?? 0 };
}

/** The three preamble lines; the one naming read or bash is known only for the tool the capture had. */
function skillsTexts(prompt: InferredPrompt, activeTools: string[], missing: NotRecovered[]) {
  const lines = prompt.skillsPreamble ?? [];
  if (lines.length !== 3) {
    missing.push({
      field: "skills",
      why: prompt.skillsPreamble ? `the skills block has ${lines.length} preamble lines, not 3` : "no skills block",
    });
    return { intro: "", useRead: "", useBash: "", paths: "" };
  }
  const [intro, load, paths] = lines as [string, string, string];
  const viaRead = activeTools.includes("read");
  missing.push({ field: viaRead ? "skills.useBash" : "skills.useRead", why: "only the other variant was sent" });
  return { intro, useRead: viaRead ? load : "", useBash: viaRead ? "" : load, paths };
}

/** The adapter's texts, when the capture has its gateway tool `mcp`; namespace and script tools when sent. */
function mcpTexts(capture: Capture, missing: NotRecovered[], summary: ImportSummary): McpTexts | undefined {
  const proxy = capture.tools.get("mcp");
  if (!proxy) return undefined;
  const parsed = parseProxyDescription(proxy.description);
  if (!parsed) {
    summary.notes.push("tool mcp: its description has no `Usage:` block, so it is not the MCP gateway's");
    return undefined;
  }
  const texts: McpTexts = {
    proxy: {
      snippet: capture.snippets.get("mcp") ?? "",
      searchModeLine: "",
      disabledLine: "",
      ...parsed,
      parameters: parameterDescriptions(proxy.parameters),
      actionUnsupported: "",
    },
    namespace: { snippet: "", description: "", parameters: { tool: "", args: "" } },
    direct: { fallbackSnippet: "" },
    script: {
      snippet: "",
      description: "",
      parameters: { code: "", timeoutMs: "" },
      noOutput: "",
      timedOut: "",
      failed: "",
    },
  };
  summary.tools.push({ name: "mcp", as: "MCP gateway", snippet: texts.proxy.snippet !== "", guidelines: 0 });
  const namespace = [...capture.tools.values()].find((t) => t.name.startsWith("mcp__"));
  if (namespace) {
    const snippet = capture.snippets.get(namespace.name) ?? "";
    const server = snippet.split(" ").find((word) => namespaceToolName(word) === namespace.name);
    const p = parameterDescriptions(namespace.parameters);
    texts.namespace = {
      snippet: server ? snippet.replace(server, "{server}") : snippet,
      description: namespace.description,
      parameters: { tool: p.tool ?? "", args: p.args ?? "" },
    };
    for (const tool of capture.tools.values())
      if (tool.name.startsWith("mcp__"))
        summary.tools.push({ name: tool.name, as: "MCP namespace", snippet: true, guidelines: 0 });
  }
  const script = capture.tools.get("mcpScript");
  if (script) {
    const p = parameterDescriptions(script.parameters);
    Object.assign(texts.script, {
      snippet: capture.snippets.get("mcpScript") ?? "",
      description: script.description,
      parameters: { code: p.code ?? "", timeoutMs: p.timeoutMs ?? "" },
    });
    summary.tools.push({ name: "mcpScript", as: "MCP script", snippet: texts.script.snippet !== "", guidelines: 0 });
  }
  for (const field of emptyTexts("extensions.mcp", texts))
    missing.push({ field, why: "no request showed it (a tool the capture did not have, or a tool result)" });
  return texts;
}

/** Every empty string in a nested texts object, by dotted field. */
function emptyTexts(prefix: string, value: unknown): string[] {
  if (value === "") return [prefix];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => emptyTexts(`${prefix}.${key}`, inner));
}
