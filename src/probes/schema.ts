import { z } from "zod";
import { SAFE_NAME, SAFE_NAME_RULE } from "../files/safe-path.js";
import { WIRE_APIS } from "../providers/types.js";
import { strictMapping } from "../validate.js";

/**
 * What a probe file may hold, with the message each field gives when it is wrong. The loader
 * parses with it, and `scripts/gen-probe-schema.mjs` turns its input side into
 * `probes/probe.schema.json` for editors; checks that need the file system stay in load.ts.
 * YAML writes an empty value as null, so optional fields take null for absent.
 */

const MAPPING = "expected a mapping";

/** An optional field: absent or null gives `fallback`. */
function optional<T extends z.ZodType, F extends z.output<T> | undefined>(schema: T, fallback: F) {
  return schema.nullish().transform((value): z.output<T> | F => value ?? fallback);
}

/** An optional section: absent reads as an empty one, so its fields take their defaults. */
function section<T extends z.ZodType>(schema: T) {
  return schema.prefault({} as z.input<T>);
}

const nonEmptyString = z.string({ error: "expected a non-empty string" }).min(1, "expected a non-empty string");
const yesNo = z.boolean({ error: "expected true or false" });
const requestNumber = (from: number, expected: string) => z.int({ error: expected }).min(from, expected);

function oneOf<const T extends readonly [string, ...string[]]>(options: T) {
  return z.enum(options, { error: `expected one of ${options.join(", ")}` });
}

/** A list of names, also accepted as one comma-separated string (`read,mcp`) as on pi's command line. */
const NAMES = "expected a list of names or a comma-separated string";
const names = z.union([z.string(), z.array(z.string({ error: NAMES }))], { error: NAMES }).transform((value) =>
  typeof value === "string"
    ? value
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean)
    : value,
);

/** A text the model sends or a check compares: a YAML scalar, never a mapping or a list. */
const scalarText = z
  .union([z.string(), z.number(), z.boolean()], { error: "expected a string" })
  .transform((value) => String(value));

/** `/regex/flags` is a regular expression; anything else is a literal string. */
const matcher = z
  .string({ error: "expected a string or /regex/" })
  .min(1, "expected a string or /regex/")
  .transform((value, ctx): string | RegExp => {
    const regex = /^\/(.+)\/([a-z]*)$/s.exec(value);
    if (!regex) return value;
    try {
      return new RegExp(regex[1]!, regex[2]);
    } catch (error) {
      // V8 says "Invalid regular expression: /<pattern>/: <reason>"; the reason is what helps.
      const reason = (error as Error).message.split(": ").at(-1);
      ctx.issues.push({ code: "custom", input: value, message: `expected a valid regular expression (${reason})` });
      return z.NEVER;
    }
  });

const toolCall = strictMapping(
  {
    call: nonEmptyString,
    args: z
      .union([z.string(), z.record(z.string(), z.unknown())], { error: "expected a mapping or a raw JSON string" })
      .optional(),
  },
  MAPPING,
);

const scriptStep = z.union(
  [
    strictMapping({ text: scalarText }, MAPPING),
    strictMapping({ calls: z.array(toolCall, { error: "expected a list" }) }, MAPPING),
    toolCall,
  ],
  { error: "expected {text: ...}, {call: name, args: ...} or {calls: [...]}" },
);

const script = z.array(scriptStep, { error: "expected a list" });

const agent = strictMapping(
  {
    kind: optional(
      z.enum(["runtime", "pi"], {
        error: 'expected "runtime" or "pi" (the real pi against the mock; see payload-probe agents install pi)',
      }),
      "runtime",
    ).meta({ description: "Which agent runs the probe when run gives no --agent." }),
    tools: optional(names, undefined),
    noTools: optional(yesNo, false).meta({ description: "Send no tools at all (pi's --no-tools)." }),
    noBuiltinTools: optional(yesNo, false).meta({
      description: "Register none of the built-in tools; extension tools stay.",
    }),
    excludeTools: optional(names, undefined).meta({ description: "Tool names kept out of the active set." }),
    skills: optional(z.array(nonEmptyString, { error: "expected a list" }), []).meta({
      description:
        "Skill files or folders (relative to the probe file's folder), staged into the workspace (pi's --skill).",
    }),
    noSkills: optional(yesNo, false).meta({
      description: "Skip skill discovery; only `skills` paths load (pi's --no-skills).",
    }),
    skillMode: optional(oneOf(["index", "load_skill"]), "index"),
    skillLayers: optional(
      strictMapping(
        {
          builtin: optional(nonEmptyString, undefined),
          user: optional(nonEmptyString, undefined),
          project: optional(nonEmptyString, undefined),
        },
        MAPPING,
      ).transform((layers) => Object.fromEntries(Object.entries(layers).filter(([, dir]) => dir !== undefined))),
      undefined,
    ),
    trusted: optional(yesNo, false).meta({ description: "Trust project skill sources." }),
    mcp: optional(
      strictMapping(
        {
          config: nonEmptyString.meta({
            description:
              "The MCP config file, relative to the probe file's folder; its stdio servers start in the config's folder.",
          }),
          cache: optional(oneOf(["valid", "empty-file", "missing"]), "valid"),
          exclusive: optional(yesNo, true),
        },
        MAPPING,
      ),
      undefined,
    ),
    cwd: optional(nonEmptyString, undefined).meta({
      description: "The agent's cwd, relative to the probe file's folder (default: the workspace's own cwd).",
    }),
    profile: optional(nonEmptyString, undefined).meta({
      description: "A profile file relative to the probe file's folder (default: the shipped profiles/default.json).",
    }),
  },
  MAPPING,
);

const model = strictMapping(
  {
    api: optional(oneOf(WIRE_APIS), "openai-completions"),
    id: optional(nonEmptyString, "token-plan/qwen3.8-flash").meta({
      description: "The model id sent in every request.",
    }),
    priceAs: optional(nonEmptyString, undefined).meta({
      description:
        "The real model whose prices --cost uses for this probe's requests (default: gpt-4.1 for the OpenAI APIs, claude-sonnet-4-5 for Messages).",
    }),
    script: optional(script, [])
      .refine((steps) => steps.length > 0, "expected at least one model turn")
      .meta({ description: "One entry per model turn: {text}, {call, args} or {calls: [...]}." }),
    sampling: optional(script, []).meta({ description: "The script for nested MCP sampling requests." }),
    cacheDiagnostics: optional(yesNo, false).meta({
      description:
        "Ask for the provider's cache diagnostics in the runtime's Messages and Responses requests, each chained to the previous response (docs/capture.md); the scripted model answers them.",
    }),
  },
  MAPPING,
);

const marker = strictMapping(
  { in: optional(oneOf(["system", "tools", "messages"]), "messages"), match: matcher },
  MAPPING,
);

/** One value per request, or `{all: value}` for every request. */
const SERIES = "expected a list with one value per request, or {all: value}";
const series = z.union([z.array(z.unknown()), z.strictObject({ all: z.unknown() }, { error: SERIES })], {
  error: SERIES,
});

const textExpect = strictMapping(
  {
    equals: optional(scalarText, undefined),
    contains: optional(scalarText, undefined),
    startsWith: optional(scalarText, undefined),
    endsWith: optional(scalarText, undefined),
    matches: optional(
      matcher.transform((m) => (typeof m === "string" ? new RegExp(m) : m)),
      undefined,
    ),
  },
  MAPPING,
);

const wireExpect = strictMapping(
  {
    methods: optional(names, undefined),
    calls: optional(
      z.array(strictMapping({ name: nonEmptyString, arguments: z.unknown() }, MAPPING), { error: "expected a list" }),
      undefined,
    ),
    firstMessageBefore: optional(requestNumber(1, "expected a request number"), undefined),
    silent: optional(yesNo, false),
  },
  MAPPING,
);

const skillDiagnostic = strictMapping(
  {
    type: optional(oneOf(["warning", "error", "collision"]), "warning"),
    message: nonEmptyString,
    path: nonEmptyString,
    winner: optional(nonEmptyString, undefined),
    loser: optional(nonEmptyString, undefined),
  },
  MAPPING,
);

const systemDelta = strictMapping(
  {
    at: requestNumber(2, "expected a request number of 2 or more"),
    added: optional(z.array(matcher, { error: "expected a list" }), []),
    removed: optional(z.array(matcher, { error: "expected a list" }), []),
  },
  MAPPING,
);

/**
 * The expect block. The probe's own fills in defaults (no constant fields, no deltas …); a per-agent
 * block (`pi.expect`) leaves what it does not state undefined, so only what it states replaces the probe's.
 */
function expectMapping<D extends boolean>(withDefaults: D) {
  const or = <T>(value: T) => (withDefaults ? value : undefined) as D extends true ? T : undefined;
  return strictMapping(
    {
      requests: optional(
        z.int({ error: "expected a whole number of requests" }).min(0, "expected a whole number of requests"),
        undefined,
      ),
      each: optional(z.record(z.string(), series, { error: MAPPING }), or({})).meta({
        description: "Record field → one value per request, or {all: value}.",
      }),
      constant: optional(names, or([])).meta({ description: "Record fields identical in every request." }),
      systemDelta: optional(z.array(systemDelta, { error: "expected a list" }), or([])),
      toolResults: optional(
        z
          .record(z.string().regex(/^[1-9]\d*$/, "expected a tool result number from 1"), textExpect, {
            error: MAPPING,
          })
          .transform((results) => Object.fromEntries(Object.entries(results).map(([n, e]) => [Number(n), e]))),
        or({}),
      ),
      wire: optional(z.record(z.string(), wireExpect, { error: MAPPING }), or({})).meta({
        description: "Server name → what the stub MCP server received.",
      }),
      surface: section(
        strictMapping({ registered: optional(series, undefined), active: optional(series, undefined) }, MAPPING),
      ),
      skills: optional(
        strictMapping(
          {
            loaded: optional(names, undefined),
            diagnostics: optional(z.array(skillDiagnostic, { error: "expected a list" }), undefined),
          },
          MAPPING,
        ),
        undefined,
      ),
    },
    MAPPING,
  );
}

export const probeSchema = strictMapping(
  {
    name: z
      .string({ error: `expected ${SAFE_NAME_RULE}` })
      .regex(SAFE_NAME, `expected ${SAFE_NAME_RULE}`)
      .meta({
        description: `The probe's name: its runs folder and workspace are named after it, so ${SAFE_NAME_RULE}.`,
      }),
    title: optional(nonEmptyString, "").meta({ description: "One line saying what the probe shows." }),
    description: optional(nonEmptyString, "").meta({ description: "What the experiment shows and why." }),
    agent: section(agent).meta({ description: "How the agent runtime is set up: tools, skills, MCP." }),
    model: section(model).meta({ description: "The scripted model." }),
    prompts: z
      .array(nonEmptyString, {
        error: (issue) => (issue.input == null ? "expected at least one user message" : "expected a list"),
      })
      .min(1, "expected at least one user message")
      .meta({ description: "The user messages, in order." }),
    markers: optional(z.record(z.string(), marker, { error: MAPPING }), {}).meta({
      description: "Name → {in, match}: counts the tool definitions, system parts or messages containing the match.",
    }),
    expect: section(expectMapping(true)).meta({ description: "What must hold for the run to pass." }),
    pi: optional(
      strictMapping(
        {
          skip: optional(nonEmptyString, undefined).meta({
            description: "Why this probe's set-up cannot be expressed on the real pi; it is skipped there.",
          }),
          expect: optional(expectMapping(false), undefined).meta({
            description:
              "What holds on the real pi where it differs from expect: requests, constant and systemDelta, when given, replace the probe's; each, toolResults and wire entries replace theirs key by key.",
          }),
        },
        MAPPING,
      ),
      undefined,
    ).meta({
      description: "The probe on the real pi (run --agent pi): a skip reason, or expectations that differ there.",
    }),
  },
  MAPPING,
);
