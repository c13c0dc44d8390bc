/**
 * `profile import`: the texts captured runs' requests show the model, recovered into a profile the
 * runtime can run with. Each text comes from the first request that shows it (tools, snippets,
 * guidelines, the skills preamble); the system prompt template from the first run's first request.
 * What no request showed is written empty and named in `notRecovered`.
 */
import type { RunSource } from "../analysis/load-run.js";
import { PromptReader } from "../analysis/prompt-parts.js";
import { UserError } from "../errors.js";
import { namespaceToolName } from "../mcp/naming.js";
import { parseProxyDescription } from "../mcp/proxy-description.js";
import { proxyParameters } from "../mcp/proxy-tool.js";
import type { McpTexts } from "../mcp/runtime-context.js";
import type { ToolTexts } from "../runtime/profile.js";
import { BUILTIN_ORDER, createBuiltinTools } from "../runtime/tools/builtin.js";
import { type GuidelineSplit, splitGuidelines } from "./guidelines.js";
import { type InferredPrompt, inferTemplate } from "./system-template.js";
import { parameterDescriptions, type SentTool, sentTool } from "./wire-tool.js";

type FileOpsVariant = "bash" | "powershell" | "both";

export interface NotRecovered {
  /** The profile field left empty, dotted (`skills.useBash`). */
  field: string;
  why: string;
}

export interface ImportSummary {
  /** The runs read, as named in output. */
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
  labels: string[];
  tools: Map<string, SentTool>;
  /** Each distinct system prompt with its request's tool names, in the order first sent. */
  prompts: { toolNames: string[]; inferred: InferredPrompt }[];
  /** Tool-list snippets of every request, the first seen for each tool. */
  snippets: Map<string, string>;
  requests: number;
}

/** How often a long import says how far it got. */
export const PROGRESS_EVERY = 5000;

/** Told the requests read so far, every PROGRESS_EVERY requests. */
export type ImportProgress = (label: string, requests: number) => void;

function readCapture(sources: RunSource[], progress?: ImportProgress): Capture {
  const capture: Capture = { labels: [], tools: new Map(), prompts: [], snippets: new Map(), requests: 0 };
  const seen = new Set<string>();
  const prompts = new PromptReader();
  for (const source of sources) {
    if (!source.hasPayloads)
      throw new UserError(`run ${source.label} kept no wire bodies (payloads.jsonl): there is nothing to import`);
    const before = capture.requests;
    for (const payload of source.lazyPayloads()) {
      const { api, body, kind } = payload.stored();
      if (api === null || kind !== "loop") continue;
      capture.requests++;
      const read = capture.requests - before;
      if (read % PROGRESS_EVERY === 0) progress?.(source.label, read);
      // Tools and system parts alone, part by part: the conversation, most of a long session's body, is never joined.
      const d = prompts.of(api, body, () => payload.load().body);
      const tools = d.tools.map((t) => sentTool(t.json));
      for (const tool of tools) if (!capture.tools.has(tool.name)) capture.tools.set(tool.name, tool);
      const toolNames = tools.map((t) => t.name);
      const system = d.systemParts.join("\n");
      // A long run sends the same prompt again and again; each distinct one is read once.
      const key = JSON.stringify([toolNames, system]);
      if (seen.has(key)) continue;
      seen.add(key);
      const inferred = inferTemplate(system, toolNames);
      capture.prompts.push({ toolNames, inferred });
      for (const [name, snippet] of inferred.snippets)
        if (!capture.snippets.has(name)) capture.snippets.set(name, snippet);
    }
    if (capture.requests === before)
      throw new UserError(
        `run ${source.label} has no agent requests (loop requests with a wire body): nothing to import`,
      );
    capture.labels.push(source.label);
  }
  return capture;
}

/** Only built-in tools carry guidelines in a profile, so only they can own a line. */
function splitPrompt({ toolNames, inferred }: Capture["prompts"][number]): GuidelineSplit {
  const builtins = toolNames.filter((t) => (BUILTIN_ORDER as readonly string[]).includes(t));
  return splitGuidelines(inferred.guidelines ?? [], toolNames, builtins);
}

/**
 * The first prompt gives the template and the closing lines; later prompts (other tool sets, other
 * runs) add the file-operations variants and the guidelines of tools the first did not have.
 */
function mergedGuidelines(capture: Capture): {
  fileOps: Record<FileOpsVariant, string>;
  perTool: Map<string, string[]>;
  closing: string[];
} {
  const [first, ...others] = capture.prompts.map(splitPrompt);
  const merged = {
    fileOps: { bash: "", powershell: "", both: "" },
    perTool: new Map(first!.perTool),
    closing: first!.closing,
  };
  for (const split of [first!, ...others]) {
    if (split.fileOps && !merged.fileOps[split.fileOps.variant])
      merged.fileOps[split.fileOps.variant] = split.fileOps.line;
    for (const [tool, lines] of split.perTool) if (!merged.perTool.has(tool)) merged.perTool.set(tool, lines);
  }
  return merged;
}

export function importProfile(
  sources: RunSource[],
  name: string,
  progress?: ImportProgress,
): { profile: object; summary: ImportSummary } {
  const capture = readCapture(sources, progress);
  const first = capture.prompts[0]!;
  const guidelines = mergedGuidelines(capture);
  const missing: NotRecovered[] = [];
  const from = capture.labels.join(", ");
  const summary: ImportSummary = {
    run: from,
    requests: capture.requests,
    tools: [],
    template: { lines: first.inferred.template.length, placeholders: placeholdersIn(first.inferred.template) },
    skillsPreamble: capture.prompts.some((p) => p.inferred.skillsPreamble),
    notRecovered: missing,
    notes: [...first.inferred.notes],
  };
  for (const variant of ["bash", "powershell", "both"] as const)
    if (!guidelines.fileOps[variant])
      missing.push({ field: `systemPrompt.fileOpsGuideline.${variant}`, why: "no request had that shell set-up" });

  const tools: Record<string, ToolTexts> = {};
  for (const builtin of BUILTIN_ORDER) {
    const sent = capture.tools.get(builtin);
    if (!sent) missing.push({ field: `tools.${builtin}`, why: "no request sent this tool" });
    tools[builtin] = toolTexts(sent, capture.snippets.get(builtin), guidelines.perTool.get(builtin));
    if (sent) summary.tools.push(toolRow(builtin, "built-in", tools[builtin]!));
  }
  keepForeignSchemas(tools, capture, summary);
  const mcp = mcpTexts(capture, missing, summary);
  for (const toolName of capture.tools.keys())
    if (!summary.tools.some((t) => t.name === toolName))
      summary.notes.push(`tool ${toolName}: not one the runtime or its MCP adapter defines; its texts are not kept`);

  const profile = {
    name,
    about: `Imported by payload-probe profile import from ${from} (${capture.requests} requests). The texts are that agent's, not payload-probe's.`,
    imported: { from: capture.labels, requests: capture.requests, notRecovered: missing },
    systemPrompt: {
      template: first.inferred.template,
      fileOpsGuideline: guidelines.fileOps,
      closingGuidelines: guidelines.closing,
    },
    tools,
    skills: skillsTexts(capture, missing),
    extensions: mcp ? { mcp } : {},
  };
  return { profile, summary };
}

/**
 * The runtime builds each built-in's schema in pi's structure from the descriptions alone; where
 * that is not the schema sent (another property, a default, a bound), the sent one is kept whole.
 * Key order is the codec's business (Anthropic writes `properties` before `required`), so the
 * comparison ignores it.
 */
function keepForeignSchemas(tools: Record<string, ToolTexts>, capture: Capture, summary: ImportSummary): void {
  for (const built of createBuiltinTools({ tools })) {
    const sent = capture.tools.get(built.name);
    if (!sent || canonicalJson(built.parameters) === canonicalJson(sent.parameters)) continue;
    tools[built.name]!.schema = sent.parameters;
    summary.notes.push(`tool ${built.name}: its parameter schema is not shaped as the runtime builds it; kept as sent`);
  }
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
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

/** The three preamble lines of the first prompt with a skills block; its load line names read or bash. */
function skillsTexts(capture: Capture, missing: NotRecovered[]) {
  const prompt = capture.prompts.find((p) => p.inferred.skillsPreamble);
  const lines = prompt?.inferred.skillsPreamble ?? [];
  if (lines.length !== 3) {
    missing.push({
      field: "skills",
      why: prompt ? `the skills block has ${lines.length} preamble lines, not 3` : "no skills block",
    });
    return { intro: "", useRead: "", useBash: "", paths: "" };
  }
  const [intro, load, paths] = lines as [string, string, string];
  const viaRead = prompt!.toolNames.includes("read");
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
  if (canonicalJson(proxyParameters(texts.proxy.parameters)) !== canonicalJson(proxy.parameters)) {
    texts.proxy.schema = proxy.parameters;
    summary.notes.push("tool mcp: its parameter schema is not shaped as the runtime builds it; kept as sent");
  }
  summary.tools.push({ name: "mcp", as: "MCP gateway", snippet: texts.proxy.snippet !== "", guidelines: 0 });
  namespaceTexts(capture, texts, summary);
  scriptTexts(capture, texts, summary);
  for (const field of emptyTexts("extensions.mcp", texts))
    missing.push({ field, why: "no request showed it (a tool the capture did not have, or a tool result)" });
  return texts;
}

/** The namespace tools' texts (`mcp__<server>`), from the first one sent, its server's name made `{server}`. */
function namespaceTexts(capture: Capture, texts: McpTexts, summary: ImportSummary): void {
  const namespace = [...capture.tools.values()].find((t) => t.name.startsWith("mcp__"));
  if (!namespace) return;
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

/** The script tool's texts (`mcpScript`), when it was sent. */
function scriptTexts(capture: Capture, texts: McpTexts, summary: ImportSummary): void {
  const script = capture.tools.get("mcpScript");
  if (!script) return;
  const p = parameterDescriptions(script.parameters);
  Object.assign(texts.script, {
    snippet: capture.snippets.get("mcpScript") ?? "",
    description: script.description,
    parameters: { code: p.code ?? "", timeoutMs: p.timeoutMs ?? "" },
  });
  summary.tools.push({ name: "mcpScript", as: "MCP script", snippet: texts.script.snippet !== "", guidelines: 0 });
}

/** Every empty string in a nested texts object, by dotted field. */
function emptyTexts(prefix: string, value: unknown): string[] {
  if (value === "") return [prefix];
  if (typeof value !== "object" || value === null || Array.isArray(value)) return [];
  return Object.entries(value).flatMap(([key, inner]) => emptyTexts(`${prefix}.${key}`, inner));
}
