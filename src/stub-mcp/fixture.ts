import { z } from "zod";
import { inputError } from "../errors.js";
import { readInputFile } from "../files/input-file.js";
import { parseInput } from "../validate.js";
import { type StubFixture, type StubTool, TOOL_FAULTS } from "./types.js";

const jsonObject = z.record(z.string(), z.unknown(), { error: "expected a JSON object" });
const string = z.string({ error: "expected a string" });
const array = <T extends z.ZodType>(item: T) => z.array(item, { error: "expected an array" });
const object = <T extends z.core.$ZodLooseShape>(shape: T) => z.object(shape, { error: "expected a JSON object" });

const tool: z.ZodType<StubTool> = z.lazy(() =>
  object({
    name: string,
    description: string.optional(),
    inputSchema: jsonObject,
    result: string.optional(),
    sampling: object({ prompt: string, request: jsonObject.optional() }).optional(),
    fault: z.enum(TOOL_FAULTS, { error: `expected one of ${TOOL_FAULTS.join(", ")}` }).optional(),
    addsTool: tool.optional(),
    removesTool: string.optional(),
  }).check((ctx) => {
    // A sampling tool answers with what the client sampled, so only the others need a result template.
    if (ctx.value.sampling === undefined && ctx.value.result === undefined)
      ctx.issues.push({ code: "custom", path: ["result"], input: undefined, message: "expected a string" });
  }),
);

const fixtureSchema = object({
  name: string,
  instructions: string.optional(),
  tools: array(tool),
  resources: array(object({ uri: string, name: string, description: string.optional(), text: string })).optional(),
  prompts: array(
    object({
      name: string,
      description: string.optional(),
      arguments: array(
        object({
          name: string,
          description: string.optional(),
          required: z.boolean({ error: "expected true or false" }).optional(),
        }),
      ).optional(),
      messages: array(
        object({ role: z.enum(["user", "assistant"], { error: 'expected "user" or "assistant"' }), text: string }),
      ),
    }),
  ).optional(),
  toolsListExtra: jsonObject.optional(),
  addsToolAfterInit: object({
    delayMs: z.int({ error: "expected an integer ≥ 0" }).min(0, "expected an integer ≥ 0"),
    tool,
  }).optional(),
});

/** Reads and checks a stub fixture; every problem names the file and the field. Unknown keys (e.g. `transport`) are ignored. */
export function loadFixture(file: string): StubFixture {
  const text = readInputFile(file, "stub fixture").toString("utf8");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw inputError(file, undefined, `expected a readable JSON file (${(error as Error).message})`);
  }
  return parseInput(fixtureSchema, raw, file);
}
