/**
 * The routes `record`'s proxy serves, one per provider, and the base URL each provider's SDKs take
 * for it. A new wire API joins by a row here (and its pointer in agents/agent-pointers.ts).
 */
import type { ProxyBases } from "../agents/pointer-types.js";
import type { ProxyRoute } from "../capture/capture-proxy.js";
import { wrapLine } from "../text/text-wrap.js";
import { parseUpstream } from "./capture-flags.js";

interface RecordRoute {
  provider: keyof ProxyBases;
  prefix: string;
  /** The real provider, the route's upstream unless a flag names another. */
  upstream: string;
  /** What the provider's SDKs add to the route to make their base URL (OpenAI's carries `/v1`). */
  sdkPath: string;
  /** The wire APIs it carries, for record's --help. */
  apis: string;
  /** Its base is on the HTTPS listener when there is one (a client that refuses plain HTTP). */
  secure?: boolean;
}

export const RECORD_ROUTES: RecordRoute[] = [
  {
    provider: "anthropic",
    prefix: "/anthropic",
    upstream: "https://api.anthropic.com",
    sdkPath: "",
    apis: "Anthropic Messages",
  },
  {
    provider: "openai",
    prefix: "/openai",
    upstream: "https://api.openai.com",
    sdkPath: "/v1",
    apis: "OpenAI chat completions, Responses",
  },
  {
    provider: "gemini",
    prefix: "/gemini",
    upstream: "https://generativelanguage.googleapis.com",
    sdkPath: "",
    apis: "Gemini",
  },
  {
    provider: "code-assist",
    prefix: "/code-assist",
    upstream: "https://cloudcode-pa.googleapis.com",
    sdkPath: "",
    apis: "Gemini, wrapped by Code Assist (the Gemini CLI signed in with Google)",
  },
  // Codex sends its model requests to `<origin>/backend-api/codex/responses` whatever the path of its
  // chatgpt_base_url (chatgpt-routing.ts), so this route's prefix is the backend's own path.
  {
    provider: "chatgpt",
    prefix: "/backend-api",
    upstream: "https://chatgpt.com/backend-api",
    sdkPath: "",
    apis: "OpenAI Responses and the backend's other calls (Codex signed in with ChatGPT; served over HTTPS too, with a certificate made for the session)",
    secure: true,
  },
  // Claude Code on Vertex AI (ANTHROPIC_VERTEX_BASE_URL): the regional endpoint of CLOUD_ML_REGION
  // when it names one (vertexUpstream), else the global one.
  {
    provider: "vertex",
    prefix: "/vertex",
    upstream: "https://aiplatform.googleapis.com",
    sdkPath: "/v1",
    apis: "Vertex AI: Claude's rawPredict and streamRawPredict, Gemini under publishers/google (at <CLOUD_ML_REGION>-aiplatform.googleapis.com when the region is set)",
  },
];

/** record's --help lines for its routes, one per route (wrapped to 80 columns): prefix, upstream, APIs. */
export function routesHelp(): string {
  const width = Math.max(...RECORD_ROUTES.map((route) => route.prefix.length));
  return RECORD_ROUTES.flatMap(({ prefix, upstream, apis }) =>
    wrapLine(`  ${prefix.padEnd(width)} → ${upstream}   ${apis}`, 80, width + 5, true),
  ).join("\n");
}

/** Vertex AI's endpoint for a region: `https://<region>-aiplatform.googleapis.com`, the global one for `global`. */
function vertexUpstream(region: string | undefined): string | undefined {
  if (!region || region === "global" || !/^[a-z0-9-]+$/.test(region)) return undefined;
  return `https://${region}-aiplatform.googleapis.com`;
}

/** The `--upstream-<provider>` flags, each a string option. */
export const UPSTREAM_OPTIONS = {
  upstream: { type: "string" },
  "upstream-anthropic": { type: "string" },
  "upstream-openai": { type: "string" },
  "upstream-gemini": { type: "string" },
  "upstream-code-assist": { type: "string" },
  "upstream-chatgpt": { type: "string" },
  "upstream-vertex": { type: "string" },
} as const;

type UpstreamValues = { upstream?: string } & { [K in `upstream-${keyof ProxyBases}`]?: string };

/**
 * Each route with its upstream: `--upstream-<provider>`, else `--upstream`, else the provider (for
 * Vertex AI, the endpoint of the user's CLOUD_ML_REGION).
 */
export function recordRoutes(values: UpstreamValues, env: NodeJS.ProcessEnv = process.env): ProxyRoute[] {
  const all = values.upstream === undefined ? undefined : parseUpstream("record", "upstream", values.upstream);
  return RECORD_ROUTES.map(({ provider, prefix, upstream }) => {
    const flag = `upstream-${provider}` as const;
    const own = values[flag] === undefined ? undefined : parseUpstream("record", flag, values[flag]);
    const regional = provider === "vertex" ? vertexUpstream(env.CLOUD_ML_REGION) : undefined;
    return { prefix, upstream: own ?? all ?? regional ?? upstream };
  });
}

/** The base URL each provider's SDKs take, on a proxy at `origin` (and `secureOrigin`, its HTTPS listener). */
export function proxyBases(origin: string, secureOrigin?: string): ProxyBases {
  const bases = {} as ProxyBases;
  for (const route of RECORD_ROUTES)
    bases[route.provider] = `${(route.secure && secureOrigin) || origin}${route.prefix}${route.sdkPath}`;
  return bases;
}
