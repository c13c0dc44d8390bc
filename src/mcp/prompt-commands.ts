/**
 * MCP prompts as slash commands: `/mcp__<server>__<prompt> …` fetches the prompt from its server
 * and the flattened result becomes the user's message.
 */
import type { SlashCommand } from "../runtime/types.js";
import { promptCommandName } from "./naming.js";
import type { ServerManager } from "./server-manager.js";
import type { CachedPrompt } from "./types.js";

/** `k=v` words name an argument; other words fill the prompt's arguments in declared order. */
function parsePromptArgs(text: string, prompt: CachedPrompt): Record<string, string> {
  const named: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const eq = word.indexOf("=");
    if (eq > 0) named[word.slice(0, eq)] = word.slice(eq + 1);
    else positional.push(word);
  }
  for (const argument of prompt.arguments ?? []) {
    if (named[argument.name] !== undefined || positional.length === 0) continue;
    named[argument.name] = positional.shift()!;
  }
  return named;
}

type PromptMessage = { role: string; content: { type: string; text?: string } };

/** A lone user message reads as its text; anything else as `[role] text` blocks. */
function flattenPromptMessages(messages: readonly PromptMessage[]): string {
  const text = (m: PromptMessage) => (m.content.type === "text" ? (m.content.text ?? "") : `[${m.content.type}]`);
  if (messages.length === 1 && messages[0]!.role === "user") return text(messages[0]!);
  return messages.map((m) => `[${m.role}] ${text(m)}`).join("\n\n");
}

export function createPromptCommand(manager: ServerManager, server: string, prompt: CachedPrompt): SlashCommand {
  return {
    name: promptCommandName(server, prompt.name),
    description: prompt.description,
    async run(args) {
      const result = await manager.getPrompt(server, prompt.name, parsePromptArgs(args, prompt));
      return flattenPromptMessages(result.messages as PromptMessage[]);
    },
  };
}
