/**
 * The adapter's tool surface: which MCP tools are registered, in which order, and which of them are
 * active. Registration only ever appends (the runtime has no unregister); tools that must not be
 * sent — lazy direct tools nobody searched for, namespace tools of a server in backoff — are kept
 * out of the active set instead.
 */
import type { RuntimeTool } from "../runtime/types.js";
import { buildDirectTools, type DirectToolSpec, isDirect } from "./direct-tools.js";
import { createNamespaceTool, namespaceServers } from "./namespace-tools.js";
import { createPromptCommand } from "./prompt-commands.js";
import type { McpRuntime } from "./runtime-context.js";
import type { SearchableTool } from "./search.js";

export class McpSurface {
  /** Our registered tools and a fingerprint of what was registered, to re-register only on change. */
  private readonly registered = new Map<string, string>();
  private readonly lazy = new Set<string>();
  private readonly activated = new Set<string>();
  private readonly namespaceNames = new Set<string>();
  /** Direct tools ever registered, and the ones the servers' current metadata still offers. */
  private readonly directNames = new Set<string>();
  private currentDirect = new Set<string>();
  /** What the last sync kept out of the active set, so a tool that qualifies again comes back. */
  private held = new Set<string>();

  constructor(
    private readonly rt: McpRuntime,
    private readonly proxy: RuntimeTool,
    private readonly script: RuntimeTool | undefined,
  ) {}

  /** Start-up registration in the adapter's load order: mcpScript, direct tools, mcp, namespace tools. */
  load(): void {
    if (this.script) this.register(this.script);
    const direct = this.registerDirect();
    if (!this.proxyDisabled()) this.register(this.proxy);
    this.finish(direct);
  }

  /** After a connect or metadata change: new tools are appended and the active set re-applied. */
  sync(): void {
    this.finish(this.registerDirect());
  }

  /**
   * Lazy direct tools among a search's matches join the active set, in match order, for the rest of
   * the session. Returns the names this search activated.
   */
  activate(matches: readonly SearchableTool[]): string[] {
    this.sync();
    const names = [...new Set(matches.map((m) => m.name))].filter(
      (name) => this.lazy.has(name) && !this.activated.has(name),
    );
    if (names.length === 0) return [];
    for (const name of names) this.activated.add(name);
    this.held = new Set([...this.held].filter((name) => !this.activated.has(name)));
    this.rt.api.setActiveTools([...this.rt.api.getActiveTools(), ...names]);
    return names;
  }

  private finish(direct: DirectToolSpec[]): void {
    this.registerNamespaces(direct);
    this.registerPromptCommands();
    this.applyActive();
  }

  /** `disableProxyTool` holds only when every direct server can be served from its cache, without search. */
  private proxyDisabled(): boolean {
    if (this.rt.config.settings.disableProxyTool !== true) return false;
    const settings = this.rt.manager.enabled().map((s) => ({ state: s, setting: this.rt.directSetting(s.name) }));
    const direct = settings.filter(({ setting }) => isDirect(setting));
    return (
      direct.length > 0 && direct.every(({ state, setting }) => setting !== "search" && state.cached !== undefined)
    );
  }

  private registerDirect(): DirectToolSpec[] {
    const specs = buildDirectTools(this.rt);
    this.currentDirect = new Set(specs.map((spec) => spec.tool.name));
    for (const spec of specs) {
      this.directNames.add(spec.tool.name);
      if (spec.lazy) this.lazy.add(spec.tool.name);
      this.register(spec.tool);
    }
    return specs;
  }

  private registerNamespaces(direct: DirectToolSpec[]): void {
    const eligible = namespaceServers(this.rt, new Set(direct.map((d) => d.tool.name)));
    for (const { server, name } of eligible) {
      this.namespaceNames.add(name);
      this.register(createNamespaceTool(this.rt, server, name, this.proxy));
    }
  }

  private registerPromptCommands(): void {
    for (const state of this.rt.manager.enabled()) {
      for (const prompt of this.rt.manager.metadata(state.name)?.prompts ?? []) {
        this.rt.api.registerCommand(createPromptCommand(this.rt.manager, state.name, prompt));
      }
    }
  }

  private register(tool: RuntimeTool): void {
    const fingerprint = JSON.stringify([tool.description, tool.parameters, tool.promptSnippet]);
    if (this.registered.get(tool.name) === fingerprint) return;
    this.registered.set(tool.name, fingerprint);
    this.rt.api.registerTool(tool);
  }

  /**
   * Keep unsearched lazy tools, direct tools their server no longer lists, and namespace tools of
   * unusable servers inactive; bring back the rest.
   */
  private applyActive(): void {
    const usableNamespaces = new Set(namespaceServers(this.rt, new Set()).map((n) => n.name));
    const held = new Set<string>([
      ...[...this.lazy].filter((name) => !this.activated.has(name)),
      ...[...this.namespaceNames].filter((name) => !usableNamespaces.has(name)),
      ...[...this.directNames].filter((name) => !this.currentDirect.has(name)),
    ]);
    const active = this.rt.api.getActiveTools();
    const next = active.filter((name) => !held.has(name));
    for (const name of this.held) if (!held.has(name) && !next.includes(name)) next.push(name);
    this.held = held;
    if (next.length !== active.length || next.some((name, i) => name !== active[i])) this.rt.api.setActiveTools(next);
  }
}
