import type { RuntimeTool, ToolSource } from "./types.js";

export interface ToolFilter {
  /** `--tools`: the initial active list and an allowlist for the registry; request order follows it. */
  allow?: string[];
  /** `--exclude-tools`: applied after the allowlist. */
  deny?: string[];
  /** `--no-builtin-tools`: built-ins are registered but start inactive. */
  noBuiltinTools?: boolean;
}

interface Entry {
  tool: RuntimeTool;
  source: ToolSource;
}

/**
 * The tool registry and the active set, kept apart as pi keeps them: every registered tool can be
 * activated later, but only the active ones, in active order, are sent with a request.
 */
export class ToolRegistry {
  private readonly builtins: RuntimeTool[];
  private readonly extensionTools: RuntimeTool[] = [];
  private readonly seenExtensionTools = new Set<string>();
  private registered = new Map<string, Entry>();
  private active: string[];

  constructor(
    builtins: RuntimeTool[],
    defaultActive: string[],
    private readonly filter: ToolFilter = {},
  ) {
    this.builtins = builtins;
    this.active = filter.allow ? [...filter.allow] : filter.noBuiltinTools ? [] : [...defaultActive];
    this.refresh();
  }

  private admitted(name: string): boolean {
    if (this.filter.allow && !this.filter.allow.includes(name)) return false;
    return !this.filter.deny?.includes(name);
  }

  /**
   * Rebuild the registry (built-ins first; a later tool of the same name replaces an earlier one) and
   * the active set: what was active and is still registered, then every allowlisted tool, then every
   * extension tool not seen by an earlier refresh.
   */
  private refresh(): void {
    const registered = new Map<string, Entry>();
    for (const tool of this.builtins)
      if (this.admitted(tool.name)) registered.set(tool.name, { tool, source: "builtin" });
    for (const tool of this.extensionTools)
      if (this.admitted(tool.name)) registered.set(tool.name, { tool, source: "extension" });
    this.registered = registered;

    const next: string[] = [];
    const add = (name: string) => {
      if (registered.has(name) && !next.includes(name)) next.push(name);
    };
    // A name from --tools whose tool has not registered yet keeps its place, so an extension tool that
    // registers after the registry exists still lands where --tools put it; until then it is not active.
    const awaited = (name: string) => this.filter.allow !== undefined && this.admitted(name) && !registered.has(name);
    for (const name of this.active) {
      if (awaited(name) && !next.includes(name)) next.push(name);
      else add(name);
    }
    this.filter.allow?.forEach(add);
    for (const tool of this.extensionTools) {
      if (this.seenExtensionTools.has(tool.name)) continue;
      this.seenExtensionTools.add(tool.name);
      add(tool.name);
    }
    this.active = next;
  }

  register(tool: RuntimeTool): void {
    const at = this.extensionTools.findIndex((t) => t.name === tool.name);
    if (at >= 0) this.extensionTools[at] = tool;
    else this.extensionTools.push(tool);
    this.refresh();
  }

  /** Only registered names are kept; the order given becomes the request order. */
  setActive(names: string[]): void {
    this.active = [...new Set(names.filter((name) => this.registered.has(name)))];
  }

  registeredNames(): string[] {
    return [...this.registered.keys()];
  }

  activeNames(): string[] {
    return this.active.filter((name) => this.registered.has(name));
  }

  activeTools(): RuntimeTool[] {
    return this.activeNames().map((name) => this.registered.get(name)!.tool);
  }

  all(): Entry[] {
    return [...this.registered.values()];
  }

  get(name: string): RuntimeTool | undefined {
    return this.registered.get(name)?.tool;
  }
}
