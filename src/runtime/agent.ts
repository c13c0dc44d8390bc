import type { Codec, Context, Message, ModelSpec, ToolDefinition, Transport } from "../providers/types.js";
import { parseToolArgs } from "../tool-args.js";
import { EventBus } from "./events.js";
import type { Profile } from "./profile.js";
import { type ToolFilter, ToolRegistry } from "./registry.js";
import { buildSystemPrompt, type SystemPromptInput } from "./system-prompt.js";
import { createBuiltinTools, DEFAULT_ACTIVE } from "./tools/builtin.js";
import type { Extension, ExtensionAPI, RuntimeTool, SlashCommand } from "./types.js";

/** How the agent sees skills: a prompt block for the active tools, and `/skill:` expansion of input. */
export interface SkillsHook {
  block(activeToolNames: string[]): string;
  expand(text: string): string;
  /**
   * The load_skill model's dynamic system part (environment and active skills), rebuilt before
   * every request and sent after the stable prompt; pi's layout has none.
   */
  environment?(): string;
}

export interface AgentOptions {
  profile: Profile;
  cwd: string;
  /** The agent's process environment, as its tools see it (default: this process's). */
  env?: NodeJS.ProcessEnv;
  agentDir: string;
  packageDir: string;
  model: ModelSpec;
  codec: Codec;
  transport: Transport;
  filter?: ToolFilter;
  /** `--no-tools`: nothing is registered or sent. */
  noTools?: boolean;
  skills?: SkillsHook;
  extensions?: Extension[];
  flags?: Record<string, string | boolean | undefined>;
  prompt?: Pick<SystemPromptInput, "append" | "contextFiles" | "custom">;
  /**
   * `per-request` (pi): each request carries the active set as it is at that moment.
   * `per-run`: a run takes its tool list once, before its loop (the load_skill model).
   */
  toolSnapshot?: "per-request" | "per-run";
  /** Subscribes observers before any extension loads, so they see extension start-up too. */
  observe?: (bus: EventBus) => void;
  /** A loop that never ends with text is a bug in a script or a tool; stop it here. */
  maxRequestsPerPrompt?: number;
}

function toDefinition(tool: RuntimeTool): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}

/** The call's `arguments` text; none at all means no arguments. The errors are what the model reads. */
function parseArguments(text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const args = parseToolArgs(text);
  if (args.ok) return args.value;
  throw new Error(args.problem === "not-json" ? args.message : "tool arguments must be a JSON object");
}

/**
 * The minimal agent: a registry and active set, a system prompt rebuilt with the active set, an
 * extension API, and the turn loop. Every provider request leaves through `options.transport`.
 */
export class Agent {
  readonly bus = new EventBus();
  readonly registry: ToolRegistry;
  readonly messages: Message[] = [];
  private systemPrompt = "";
  private readonly commands = new Map<string, SlashCommand>();
  /** Event deliveries started by synchronous API calls; awaited before the next request is built. */
  private pending: Promise<void>[] = [];

  private constructor(private readonly options: AgentOptions) {
    const builtins = options.noTools ? [] : createBuiltinTools(options.profile);
    const filter = options.noTools ? { ...options.filter, allow: [] } : options.filter;
    this.registry = new ToolRegistry(builtins, DEFAULT_ACTIVE, filter);
    this.rebuildSystemPrompt();
  }

  static async create(options: AgentOptions): Promise<Agent> {
    const agent = new Agent(options);
    options.observe?.(agent.bus);
    const api = agent.extensionApi();
    for (const extension of options.extensions ?? []) await extension(api);
    await agent.settle();
    await agent.bus.emit("session_start", { cwd: options.cwd });
    return agent;
  }

  get cwd(): string {
    return this.options.cwd;
  }

  currentSystemPrompt(): string {
    return this.systemPrompt;
  }

  private rebuildSystemPrompt(): void {
    const active = this.registry.activeTools();
    this.systemPrompt = buildSystemPrompt(this.options.profile, active, {
      cwd: this.options.cwd,
      packageDir: this.options.packageDir,
      ...this.options.prompt,
      skillsBlock: this.options.skills?.block(active.map((t) => t.name)) ?? "",
    });
  }

  /** Registry and active set change together with the system prompt, in one step, as in pi. */
  private async toolsChanged(): Promise<void> {
    this.rebuildSystemPrompt();
    await this.bus.emit("tools_changed", {
      registered: this.registry.registeredNames(),
      active: this.registry.activeNames(),
    });
  }

  extensionApi(): ExtensionAPI {
    const { options } = this;
    const changed = () => this.pending.push(this.toolsChanged());
    return {
      cwd: options.cwd,
      agentDir: options.agentDir,
      flags: options.flags ?? {},
      registerTool: (tool) => {
        if (options.noTools) return;
        this.registry.register(tool);
        changed();
      },
      getAllTools: () =>
        this.registry.all().map(({ tool, source }) => ({
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters,
          promptGuidelines: tool.promptGuidelines,
          source,
        })),
      getActiveTools: () => this.registry.activeNames(),
      setActiveTools: (names) => {
        this.registry.setActive(names);
        changed();
      },
      registerCommand: (command) => {
        this.commands.set(command.name, command);
      },
      on: (event, handler) => this.bus.on(event, handler),
      emit: (type, data) => {
        this.pending.push(this.bus.emit("extension_event", { source: "extension", type, data }));
      },
      complete: (request) => this.complete(request),
      getSystemPrompt: () => this.systemPrompt,
    };
  }

  /** A nested text-only request outside the loop, as MCP sampling asks for: no tools, own messages. */
  private async complete(request: { systemPrompt?: string; messages: Message[]; maxTokens?: number }): Promise<string> {
    const model = request.maxTokens ? { ...this.options.model, maxTokens: request.maxTokens } : this.options.model;
    const wire = this.options.codec.buildRequest(
      model,
      { systemPrompt: request.systemPrompt ?? "", messages: request.messages, tools: [] },
      "sampling",
    );
    await this.bus.emit("before_provider_request", {
      request: wire,
      registered: this.registry.registeredNames(),
      active: this.registry.activeNames(),
    });
    const response = await this.options.codec.parseStream(await this.options.transport(wire));
    return response.message.text;
  }

  /** Expand the user's input as pi does before the model is asked: `/skill:` first, then commands. */
  private async expandInput(text: string): Promise<string> {
    const expanded = this.options.skills?.expand(text) ?? text;
    const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(expanded);
    const command = match ? this.commands.get(match[1]!) : undefined;
    return command ? command.run((match![2] ?? "").trim()) : expanded;
  }

  /** One user message through the loop: request → response → tool calls → next request, until text. */
  async prompt(input: string): Promise<string> {
    const content = await this.expandInput(input);
    this.messages.push({ role: "user", content });
    await this.bus.emit("turn_start", { prompt: content });
    const snapshot = this.options.toolSnapshot === "per-run" ? this.registry.activeTools() : undefined;
    const limit = this.options.maxRequestsPerPrompt ?? 50;
    for (let request = 1; ; request++) {
      if (request > limit) throw new Error(`the loop made ${limit} requests for one prompt without a text answer`);
      const tools = (snapshot ?? this.registry.activeTools()).map(toDefinition);
      const context: Context = {
        systemPrompt: this.systemPrompt,
        environment: this.options.skills?.environment?.(),
        messages: this.messages,
        tools,
      };
      const wire = this.options.codec.buildRequest(this.options.model, context, "loop");
      await this.bus.emit("before_provider_request", {
        request: wire,
        registered: this.registry.registeredNames(),
        active: this.registry.activeNames(),
      });
      const response = await this.options.codec.parseStream(await this.options.transport(wire));
      this.messages.push(response.message);
      if (response.message.toolCalls.length === 0) {
        await this.bus.emit("turn_end", { text: response.message.text });
        return response.message.text;
      }
      for (const call of response.message.toolCalls) {
        await this.bus.emit("tool_call", { id: call.id, name: call.name, arguments: call.arguments });
        const result = await this.executeTool(call.name, call.arguments, snapshot);
        this.messages.push({
          role: "tool",
          toolCallId: call.id,
          toolName: call.name,
          content: result.content,
          isError: result.isError,
        });
        await this.bus.emit("tool_result", {
          id: call.id,
          name: call.name,
          content: result.content,
          isError: result.isError,
        });
      }
    }
  }

  private async executeTool(
    name: string,
    argsText: string,
    snapshot?: RuntimeTool[],
  ): Promise<{ content: string; isError: boolean }> {
    const tool = (snapshot ?? this.registry.activeTools()).find((t) => t.name === name);
    if (!tool) return { content: `Tool ${name} not found`, isError: true };
    try {
      const result = await tool.execute(parseArguments(argsText), {
        cwd: this.options.cwd,
        env: this.options.env ?? process.env,
      });
      await this.settle();
      return { content: result.content, isError: result.isError ?? false };
    } catch (error) {
      await this.settle();
      return { content: error instanceof Error ? error.message : String(error), isError: true };
    }
  }

  /** Let event deliveries started during a tool call finish before the next request is built. */
  private async settle(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    await Promise.all(pending);
  }

  async shutdown(): Promise<void> {
    await this.bus.emit("session_shutdown", {});
  }
}
