import { readFileSync } from "node:fs";
import { inputError } from "../errors.js";
import {
  type StubFixture,
  type StubPrompt,
  type StubPromptArgument,
  type StubPromptMessage,
  type StubResource,
  type StubTool,
  TOOL_FAULTS,
  type ToolFault,
} from "./types.js";

type Json = Record<string, unknown>;

/** Reads and checks a stub fixture; every problem names the file and the field. Unknown keys (e.g. `transport`) are ignored. */
export function loadFixture(file: string): StubFixture {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw inputError(file, undefined, `expected a readable JSON file (${(error as Error).message})`);
  }
  const check = new FieldChecker(file);
  const root = check.object(raw, undefined);
  const fixture: StubFixture = {
    name: check.string(root.name, "name"),
    tools: check.array(root.tools, "tools").map((tool, i) => readTool(check, tool, `tools[${i}]`)),
  };
  const instructions = check.optionalString(root.instructions, "instructions");
  if (instructions !== undefined) fixture.instructions = instructions;
  if (root.resources !== undefined) {
    fixture.resources = check
      .array(root.resources, "resources")
      .map((r, i) => readResource(check, r, `resources[${i}]`));
  }
  if (root.prompts !== undefined) {
    fixture.prompts = check.array(root.prompts, "prompts").map((p, i) => readPrompt(check, p, `prompts[${i}]`));
  }
  if (root.toolsListExtra !== undefined) fixture.toolsListExtra = check.object(root.toolsListExtra, "toolsListExtra");
  if (root.addsToolAfterInit !== undefined) {
    const later = check.object(root.addsToolAfterInit, "addsToolAfterInit");
    fixture.addsToolAfterInit = {
      delayMs: check.count(later.delayMs, "addsToolAfterInit.delayMs"),
      tool: readTool(check, later.tool, "addsToolAfterInit.tool"),
    };
  }
  return fixture;
}

function readTool(check: FieldChecker, value: unknown, field: string): StubTool {
  const raw = check.object(value, field);
  const tool: StubTool = {
    name: check.string(raw.name, `${field}.name`),
    inputSchema: check.object(raw.inputSchema, `${field}.inputSchema`),
  };
  const description = check.optionalString(raw.description, `${field}.description`);
  if (description !== undefined) tool.description = description;
  if (raw.sampling !== undefined) {
    const sampling = check.object(raw.sampling, `${field}.sampling`);
    tool.sampling = { prompt: check.string(sampling.prompt, `${field}.sampling.prompt`) };
    if (sampling.request !== undefined)
      tool.sampling.request = check.object(sampling.request, `${field}.sampling.request`);
  }
  // A sampling tool answers with what the client sampled, so only the others need a result template.
  const result = tool.sampling
    ? check.optionalString(raw.result, `${field}.result`)
    : check.string(raw.result, `${field}.result`);
  if (result !== undefined) tool.result = result;
  if (raw.fault !== undefined) {
    if (!TOOL_FAULTS.includes(raw.fault as ToolFault)) {
      throw inputError(check.file, `${field}.fault`, `expected one of ${TOOL_FAULTS.join(", ")}`);
    }
    tool.fault = raw.fault as ToolFault;
  }
  if (raw.addsTool !== undefined) tool.addsTool = readTool(check, raw.addsTool, `${field}.addsTool`);
  if (raw.removesTool !== undefined) tool.removesTool = check.string(raw.removesTool, `${field}.removesTool`);
  return tool;
}

function readResource(check: FieldChecker, value: unknown, field: string): StubResource {
  const raw = check.object(value, field);
  const resource: StubResource = {
    uri: check.string(raw.uri, `${field}.uri`),
    name: check.string(raw.name, `${field}.name`),
    text: check.string(raw.text, `${field}.text`),
  };
  const description = check.optionalString(raw.description, `${field}.description`);
  if (description !== undefined) resource.description = description;
  return resource;
}

function readPrompt(check: FieldChecker, value: unknown, field: string): StubPrompt {
  const raw = check.object(value, field);
  const prompt: StubPrompt = {
    name: check.string(raw.name, `${field}.name`),
    messages: check
      .array(raw.messages, `${field}.messages`)
      .map((m, i) => readPromptMessage(check, m, `${field}.messages[${i}]`)),
  };
  const description = check.optionalString(raw.description, `${field}.description`);
  if (description !== undefined) prompt.description = description;
  if (raw.arguments !== undefined) {
    prompt.arguments = check.array(raw.arguments, `${field}.arguments`).map((a, i) => {
      const argField = `${field}.arguments[${i}]`;
      const arg = check.object(a, argField);
      const argument: StubPromptArgument = { name: check.string(arg.name, `${argField}.name`) };
      const argDescription = check.optionalString(arg.description, `${argField}.description`);
      if (argDescription !== undefined) argument.description = argDescription;
      if (arg.required !== undefined) argument.required = check.boolean(arg.required, `${argField}.required`);
      return argument;
    });
  }
  return prompt;
}

function readPromptMessage(check: FieldChecker, value: unknown, field: string): StubPromptMessage {
  const raw = check.object(value, field);
  if (raw.role !== "user" && raw.role !== "assistant") {
    throw inputError(check.file, `${field}.role`, `expected "user" or "assistant"`);
  }
  return { role: raw.role, text: check.string(raw.text, `${field}.text`) };
}

/** Type checks that fail with a UserError naming the fixture file and the field. */
class FieldChecker {
  constructor(readonly file: string) {}

  object(value: unknown, field: string | undefined): Json {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw inputError(this.file, field, "expected a JSON object");
    }
    return value as Json;
  }

  array(value: unknown, field: string): unknown[] {
    if (!Array.isArray(value)) throw inputError(this.file, field, "expected an array");
    return value;
  }

  string(value: unknown, field: string): string {
    if (typeof value !== "string") throw inputError(this.file, field, "expected a string");
    return value;
  }

  optionalString(value: unknown, field: string): string | undefined {
    return value === undefined ? undefined : this.string(value, field);
  }

  count(value: unknown, field: string): number {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
      throw inputError(this.file, field, "expected an integer ≥ 0");
    return value;
  }

  boolean(value: unknown, field: string): boolean {
    if (typeof value !== "boolean") throw inputError(this.file, field, "expected true or false");
    return value;
  }
}
