import type { WireDissection } from "../../src/providers/types.js";

/** A dissected chat completions request made of the given tool JSON, system parts and messages. */
export function dissection(
  tools: string[],
  systemParts: string[],
  messages: { role: string; json: string }[],
): WireDissection {
  return {
    model: "qwen3.8-flash",
    tools: tools.map((json) => ({ name: (JSON.parse(json) as { function: { name: string } }).function.name, json })),
    toolsJson: `[${tools.join(",")}]`,
    systemParts,
    messages: messages.map((m) => ({ ...m, text: "" })),
    roles: [...systemParts.map(() => "system"), ...messages.map((m) => m.role)],
  };
}
