/**
 * The pointers' files, on a user's config folders made here: what each writes is valid for its
 * agent (TOML, JSON), keeps the user's own settings where it merges, and lands under the session's
 * temp dir only; the user's files are byte for byte as they were.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { parse } from "smol-toml";
import { afterEach, describe, expect, it } from "vitest";
import { codexBedrockProvider } from "../../src/agents/codex-config.js";
import { CODEX_PROVIDER_ID, codexChatgptSignIn, codexPointer } from "../../src/agents/codex-pointer.js";
import { opencodePointer } from "../../src/agents/opencode-pointer.js";
import { piPointer } from "../../src/agents/pi-pointer.js";
import type { PointerContext } from "../../src/agents/pointer-types.js";
import { UserError } from "../../src/errors.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const bases = {
  anthropic: "http://127.0.0.1:9/anthropic",
  openai: "http://127.0.0.1:9/openai/v1",
  gemini: "http://127.0.0.1:9/gemini",
  "code-assist": "http://127.0.0.1:9/code-assist",
  chatgpt: "https://127.0.0.1:10/backend-api",
  vertex: "http://127.0.0.1:9/vertex/v1",
};

/** Every path under `dir` with its kind, size and mtime: a write anywhere in it shows. */
function tree(dir: string): Record<string, string> {
  const seen: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    const stat = lstatSync(path);
    seen[relative(dir, path)] = `${stat.isDirectory() ? "d" : "f"} ${stat.size} ${stat.mtimeMs}`;
  }
  return seen;
}

/** A HOME with the given files (path → text), and a session temp dir beside it. */
function userWith(files: Record<string, string>): { home: string; ctx: PointerContext } {
  const home = tempDir("pointer-home-");
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(home, path, ".."), { recursive: true });
    writeFileSync(join(home, path), text);
  }
  return {
    home,
    ctx: { bases, tempDir: tempDir("pointer-session-"), env: { HOME: home, PATH: "/usr/bin" }, cwd: home },
  };
}

/** Runs a pointer and checks it left the user's HOME as it was and wrote under tempDir only. */
function pointed(pointer: typeof codexPointer, home: string, ctx: PointerContext) {
  const before = tree(home);
  const env = pointer.point(ctx);
  expect(tree(home)).toEqual(before);
  for (const value of Object.values(env))
    if (value.startsWith("/")) expect(value.startsWith(`${ctx.tempDir}/`)).toBe(true);
  return env;
}

const USER_CODEX = `# the user's own
model = "gpt-5.4"
model_provider = "azure"
profile = "work"
approval_policy = "never"

[model_providers.azure]
name = "Azure"
base_url = "https://example.invalid/openai"
env_key = "AZURE_KEY"

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]

[profiles.work]
model_provider = "azure"
model = "gpt-5.4-mini"
`;

describe("codex pointer", () => {
  it("without a config of the user's: a CODEX_HOME whose config.toml selects our provider, on Codex's WebSocket unless --codex-http", () => {
    const { home, ctx } = userWith({});
    const env = pointed(codexPointer, home, ctx);
    expect(Object.keys(env)).toEqual(["CODEX_HOME"]);
    expect(readdirSync(env.CODEX_HOME!)).toEqual(["config.toml"]);
    expect(statSync(join(env.CODEX_HOME!, "config.toml")).mode & 0o777).toBe(0o600);
    expect(parse(readFileSync(join(env.CODEX_HOME!, "config.toml"), "utf8"))).toEqual({
      model_provider: CODEX_PROVIDER_ID,
      model_providers: {
        [CODEX_PROVIDER_ID]: expect.objectContaining({
          base_url: bases.openai,
          wire_api: "responses",
          env_key: "OPENAI_API_KEY",
          supports_websockets: true,
        }),
      },
    });
    const http = pointed(codexPointer, home, { ...ctx, codexHttp: true });
    const config = parse(readFileSync(join(http.CODEX_HOME!, "config.toml"), "utf8")) as {
      model_providers: Record<string, { supports_websockets: boolean }>;
    };
    expect(config.model_providers[CODEX_PROVIDER_ID]!.supports_websockets).toBe(false);
  });

  it("the user's config.toml is kept, with our provider selected over the top-level and the profile's", () => {
    const { home, ctx } = userWith({
      ".codex/config.toml": USER_CODEX,
      ".codex/AGENTS.md": "Be brief.\n",
      ".codex/skills/tidy/SKILL.md": "---\nname: tidy\n---\n",
      ".codex/auth.json": '{"OPENAI_API_KEY":"sk-user"}',
      ".codex/sessions/2026/a.jsonl": "{}\n",
    });
    const env = pointed(codexPointer, home, ctx);
    const config = parse(readFileSync(join(env.CODEX_HOME!, "config.toml"), "utf8")) as {
      model_provider: string;
      profiles: { work: unknown };
      mcp_servers: unknown;
      model_providers: object;
    };
    expect(config.model_provider).toBe(CODEX_PROVIDER_ID);
    expect(config).toMatchObject({ model: "gpt-5.4", profile: "work", approval_policy: "never" });
    expect(config.profiles.work).toEqual({ model: "gpt-5.4-mini" });
    expect(config.mcp_servers).toEqual({ docs: { command: "docs-server", args: ["--stdio"] } });
    expect(Object.keys(config.model_providers)).toEqual(["azure", CODEX_PROVIDER_ID]);
    // Instructions and skills are the user's, through links; login and state are not shared.
    expect(readdirSync(env.CODEX_HOME!).sort()).toEqual(["AGENTS.md", "config.toml", "skills"]);
    expect(readlinkSync(join(env.CODEX_HOME!, "skills"))).toBe(join(home, ".codex", "skills"));
  });

  it("CODEX_HOME names the user's folder; a config that is not TOML is one error naming the place, not the text", () => {
    const { home, ctx } = userWith({ "elsewhere/config.toml": 'model = "a"\ntoken = sk-secret-value\n' });
    ctx.env.CODEX_HOME = join(home, "elsewhere");
    let error: unknown;
    try {
      codexPointer.point(ctx);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(
      /elsewhere\/config\.toml: expected TOML as Codex reads it \(line 2, column \d+\)$/,
    );
    expect((error as Error).message).not.toContain("sk-secret");
  });
});

describe("codex on Amazon Bedrock", () => {
  it("a Bedrock provider from config.toml, a --profile layer or -c on Codex's line (the last -c wins); any other is not one", () => {
    const { ctx } = userWith({
      ".codex/config.toml": 'model_provider = "amazon-bedrock-runtime"\n',
      ".codex/work.config.toml": 'model_provider = "azure"\n',
      ".codex/mantle.config.toml": 'model_provider = "amazon-bedrock"\n',
    });
    const { env } = ctx;
    expect(codexBedrockProvider(env, ["exec", "hi"])).toBe("amazon-bedrock-runtime");
    expect(codexBedrockProvider(env, ["--profile", "work"])).toBeUndefined();
    expect(codexBedrockProvider(env, ["-p", "mantle"])).toBe("amazon-bedrock");
    expect(codexBedrockProvider(env, ["--profile=../config"])).toBe("amazon-bedrock-runtime");
    expect(codexBedrockProvider(env, ["-c", 'model_provider="openai"'])).toBeUndefined();
    expect(codexBedrockProvider(env, ["-c", "model_provider=openai", "--config=model_provider=amazon-bedrock"])).toBe(
      "amazon-bedrock",
    );
    expect(codexBedrockProvider({ ...env, CODEX_HOME: join(env.HOME!, "none") }, [])).toBeUndefined();
  });

  it("the pointer leaves Codex on Bedrock as it is (no CODEX_HOME: its requests are signed for Bedrock's host) and says why", () => {
    const { home, ctx } = userWith({ ".codex/config.toml": 'model_provider = "amazon-bedrock"\n' });
    expect(pointed(codexPointer, home, ctx)).toEqual({});
    expect(codexPointer.caveat!(ctx)).toMatch(/^Codex's model provider is amazon-bedrock \(Amazon Bedrock.*--forward/);
    const other = userWith({ ".codex/config.toml": USER_CODEX });
    expect(codexPointer.caveat!(other.ctx)).toBeFalsy();
  });
});

describe("codex pointer, signed in with ChatGPT", () => {
  const SIGN_IN = JSON.stringify({ auth_mode: "chatgpt", tokens: { access_token: "at-secret", refresh_token: "rt" } });
  const AUTHORITY = "-----BEGIN CERTIFICATE-----\nc2Vzc2lvbg==\n-----END CERTIFICATE-----\n";

  it("keeps Codex's own provider: chatgpt_base_url and its openai_base_url at the HTTPS base, auth.json linked (never copied), CODEX_CA_CERTIFICATE trusting the session's authority and the roots", () => {
    const { home, ctx } = userWith({
      ".codex/config.toml": 'model = "gpt-5.4"\n',
      ".codex/auth.json": SIGN_IN,
      ".codex/AGENTS.md": "Be brief.\n",
    });
    expect(codexChatgptSignIn(ctx.env)).toBe(true);
    const env = pointed(codexPointer, home, { ...ctx, authority: AUTHORITY });
    expect(Object.keys(env).sort()).toEqual(["CODEX_CA_CERTIFICATE", "CODEX_HOME"]);
    expect(parse(readFileSync(join(env.CODEX_HOME!, "config.toml"), "utf8"))).toEqual({
      model: "gpt-5.4",
      chatgpt_base_url: `${bases.chatgpt}/`,
      openai_base_url: `${bases.chatgpt}/codex`,
    });
    expect(lstatSync(join(env.CODEX_HOME!, "auth.json")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(env.CODEX_HOME!, "auth.json"))).toBe(join(home, ".codex", "auth.json"));
    const bundle = readFileSync(env.CODEX_CA_CERTIFICATE!, "utf8");
    expect(bundle.startsWith(AUTHORITY)).toBe(true);
    expect(bundle.match(/BEGIN CERTIFICATE/g)!.length).toBeGreaterThan(50);
    expect(bundle).not.toContain("at-secret");
  });

  it("a user's own openai_base_url is kept: Codex's model list goes where the user sent it", () => {
    const { home, ctx } = userWith({
      ".codex/config.toml": 'openai_base_url = "https://gateway.example/codex"\n',
      ".codex/auth.json": SIGN_IN,
    });
    const env = pointed(codexPointer, home, { ...ctx, authority: AUTHORITY });
    expect(parse(readFileSync(join(env.CODEX_HOME!, "config.toml"), "utf8"))).toEqual({
      openai_base_url: "https://gateway.example/codex",
      chatgpt_base_url: `${bases.chatgpt}/`,
    });
  });

  it("a user's own CA file (CODEX_CA_CERTIFICATE, else SSL_CERT_FILE) is trusted after the authority instead of the roots", () => {
    const own = "-----BEGIN CERTIFICATE-----\nb3du\n-----END CERTIFICATE-----\n";
    const { home, ctx } = userWith({ ".codex/auth.json": SIGN_IN, "corp-ca.pem": own });
    ctx.env.SSL_CERT_FILE = join(home, "corp-ca.pem");
    const env = pointed(codexPointer, home, { ...ctx, authority: AUTHORITY });
    expect(readFileSync(env.CODEX_CA_CERTIFICATE!, "utf8")).toBe(`${AUTHORITY}${own}\n`);
  });

  it.each([
    ["an API key in auth.json", { ".codex/auth.json": '{"auth_mode":"apikey","OPENAI_API_KEY":"sk-user"}' }],
    ["a provider of the user's", { ".codex/auth.json": SIGN_IN, ".codex/config.toml": 'model_provider = "azure"\n' }],
    [
      "tokens in the keyring",
      { ".codex/auth.json": SIGN_IN, ".codex/config.toml": 'cli_auth_credentials_store = "keyring"\n' },
    ],
    ["auth.json not JSON", { ".codex/auth.json": "{" }],
    ["no auth.json", {}],
  ])("%s: not a ChatGPT sign-in record can follow, so our provider with OPENAI_API_KEY", (_, files) => {
    const { home, ctx } = userWith(files);
    expect(codexChatgptSignIn(ctx.env)).toBe(false);
    const env = pointed(codexPointer, home, { ...ctx, authority: AUTHORITY });
    expect(Object.keys(env)).toEqual(["CODEX_HOME"]);
    expect(readFileSync(join(env.CODEX_HOME!, "config.toml"), "utf8")).toContain(CODEX_PROVIDER_ID);
  });
});

describe("opencode pointer", () => {
  it("sets each provider's baseURL in OPENCODE_CONFIG_CONTENT, merged into the user's own", () => {
    const { home, ctx } = userWith({});
    ctx.env.OPENCODE_CONFIG_CONTENT = JSON.stringify({
      model: "anthropic/claude-sonnet-5",
      provider: { anthropic: { options: { timeout: 600000 }, models: { x: {} } } },
    });
    const env = pointed(opencodePointer, home, ctx);
    expect(Object.keys(env)).toEqual(["OPENCODE_CONFIG_CONTENT"]);
    expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT!)).toEqual({
      model: "anthropic/claude-sonnet-5",
      provider: {
        anthropic: { options: { timeout: 600000, baseURL: `${bases.anthropic}/v1` }, models: { x: {} } },
        openai: { options: { baseURL: bases.openai } },
        google: { options: { baseURL: `${bases.gemini}/v1beta` } },
      },
    });
    expect(readdirSync(ctx.tempDir)).toEqual([]);
  });

  it("an inline config that is not a JSON object is refused without echoing it", () => {
    const { ctx } = userWith({});
    ctx.env.OPENCODE_CONFIG_CONTENT = '{"provider": sk-secret';
    expect(() => opencodePointer.point(ctx)).toThrow(/^OPENCODE_CONFIG_CONTENT: expected a JSON object/);
    expect(() => opencodePointer.point(ctx)).not.toThrow(/sk-secret/);
  });
});

describe("pi pointer", () => {
  it("a stand-in agent dir: the user's models.json with the base URLs set, everything else linked", () => {
    const models = {
      providers: {
        anthropic: { apiKey: "$MY_KEY", modelOverrides: { "claude-sonnet-5": { name: "S" } } },
        local: { baseUrl: "http://localhost:11434/v1", api: "openai-completions", models: [{ id: "llama" }] },
      },
    };
    const { home, ctx } = userWith({
      ".pi/agent/models.json": JSON.stringify(models),
      ".pi/agent/settings.json": '{"quietStartup":true}',
      ".pi/agent/auth.json": "{}",
      ".pi/agent/sessions/s.jsonl": "{}\n",
    });
    const env = pointed(piPointer, home, ctx);
    const dir = env.PI_CODING_AGENT_DIR!;
    expect(readdirSync(dir).sort()).toEqual(["auth.json", "models.json", "sessions", "settings.json"]);
    for (const name of ["auth.json", "sessions", "settings.json"])
      expect(readlinkSync(join(dir, name))).toBe(join(home, ".pi", "agent", name));
    expect(lstatSync(join(dir, "models.json")).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, "models.json"), "utf8"))).toEqual({
      providers: {
        anthropic: { ...models.providers.anthropic, baseUrl: bases.anthropic },
        local: models.providers.local,
        openai: { baseUrl: bases.openai },
        google: { baseUrl: `${bases.gemini}/v1beta` },
      },
    });
  });

  it("PI_CODING_AGENT_DIR (with ~) names the user's dir; without one, models.json holds our providers only", () => {
    const { home, ctx } = userWith({ "pi-conf/settings.json": "{}" });
    ctx.env.PI_CODING_AGENT_DIR = "~/pi-conf";
    const dir = pointed(piPointer, home, ctx).PI_CODING_AGENT_DIR!;
    expect(readlinkSync(join(dir, "settings.json"))).toBe(join(home, "pi-conf", "settings.json"));
    expect(Object.keys(JSON.parse(readFileSync(join(dir, "models.json"), "utf8")).providers)).toEqual([
      "anthropic",
      "openai",
      "google",
    ]);
  });

  it("a models.json with comments is refused naming the file (pi reads them; we cannot merge them)", () => {
    const { ctx } = userWith({ ".pi/agent/models.json": '{ // mine\n "providers": {} }' });
    expect(() => piPointer.point(ctx)).toThrow(/models\.json: expected a JSON object without comments/);
  });
});

describe("the user's config folder", () => {
  it("one that is not a folder is one error naming it (exit 2), not a crash", () => {
    const { home, ctx } = userWith({ ".pi/agent": "a file where the folder goes" });
    expect(() => piPointer.point(ctx)).toThrow(UserError);
    expect(() => piPointer.point(ctx)).toThrow(
      `${join(home, ".pi", "agent")}: cannot list the agent's config folder (ENOTDIR)`,
    );
  });
});
