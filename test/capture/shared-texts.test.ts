/**
 * The capture's one string per distinct text (shared-texts.ts): what it hands on is the dissection
 * it was given, field for field, whatever the API and however often the texts come back.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SharedTexts } from "../../src/capture/shared-texts.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { codecFor } from "../../src/providers/codecs.js";
import type { WireApi } from "../../src/providers/types.js";

const realRequests = (name: string) =>
  (
    JSON.parse(readFileSync(join(PROJECT_ROOT, "test/fixtures/real-agents", name), "utf8")) as {
      requests: { path: string; body: string }[];
    }
  ).requests;

/** An Anthropic conversation growing a turn per request, markers on a tool and on its last block. */
function anthropicRequests(): { path: string; body: string }[] {
  const tools = [
    {
      name: "Read",
      description: "Read a file.",
      input_schema: { type: "object" },
      cache_control: { type: "ephemeral" },
    },
  ];
  const messages: { role: string; content: unknown }[] = [{ role: "user", content: "Read them all." }];
  const requests = [];
  for (let n = 1; n <= 4; n++) {
    const last = {
      ...messages.at(-1)!,
      content: [{ type: "text", text: `turn ${n}`, cache_control: { type: "ephemeral" } }],
    };
    requests.push({
      path: "/v1/messages",
      body: JSON.stringify({ model: "m", max_tokens: 9, tools, messages: [...messages, last] }),
    });
    messages.push({ role: "assistant", content: [{ type: "tool_use", id: `toolu_${n}`, name: "Read", input: { n } }] });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${n}`, content: "x".repeat(20_000 + n) }],
    });
  }
  return requests;
}

const cases: [string, WireApi, { path: string; body: string }[]][] = [
  ["an Anthropic conversation", "anthropic-messages", anthropicRequests()],
  ["Codex 0.169", "openai-responses", realRequests("codex-0.169.0-default-model.json")],
  ["Gemini CLI 0.61", "google-generative-ai", realRequests("gemini-cli-0.61.0.json")],
];

describe("SharedTexts", () => {
  it.each(cases)("%s: every dissection as it was, with the same keys, twice over", (name, api, requests) => {
    const shared = new SharedTexts();
    for (const round of [1, 2])
      for (const request of requests) {
        const d = codecFor(api).dissect(request.body, request.path);
        const out = shared.dissection(d);
        expect(out, `${name} round ${round}`).toStrictEqual(d);
        expect(JSON.stringify(out)).toBe(JSON.stringify(d));
      }
  });
});
