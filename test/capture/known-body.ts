/**
 * A hand-written openai-completions wire body whose pieces are known verbatim, so every number a
 * record derives from it can be checked against the text itself. `—` is one UTF-16 unit and 3 UTF-8 bytes.
 */
import type { WireRequest } from "../../src/providers/types.js";

export const TOOLS_JSON =
  '[{"type":"function","function":{"name":"read","description":"Read a file — text or image","parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string","description":"Path — relative or absolute"}}},"strict":false}},' +
  '{"type":"function","function":{"name":"mcp","description":"MCP gateway","parameters":{"type":"object","properties":{}},"strict":false}}]';

export const SYSTEM = "You are a probe — nothing more.\nCurrent working directory: /w";

export const MESSAGES_JSON = [
  '{"role":"user","content":[{"type":"text","text":"Find the Shape: of things"}]}',
  '{"role":"assistant","content":null,"tool_calls":[{"id":"call_1_1","type":"function","function":{"name":"mcp","arguments":"{\\"search\\":\\"echo\\"}"}}]}',
  '{"role":"tool","content":"probe_echo\\n  Shape:\\n    { value: string; }\\n\\nprobe_time\\n  Shape:\\n    {}","tool_call_id":"call_1_1"}',
];

export const BODY =
  `{"model":"qwen3.8-flash","messages":[{"role":"system","content":${JSON.stringify(SYSTEM)}},${MESSAGES_JSON.join(",")}],` +
  `"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":131072,"tools":${TOOLS_JSON},"enable_thinking":false}`;

export const REQUEST: WireRequest = {
  api: "openai-completions",
  url: "http://127.0.0.1/v1/chat/completions",
  body: BODY,
  kind: "loop",
};
