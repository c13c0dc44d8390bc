/**
 * The flags `proxy` and `record` share: where the proxy listens, what its run is called and where it
 * goes, what is redacted (and whether secrets are kept), and the upstream URLs it forwards to.
 */

import type { CaptureProxyOptions } from "../capture/capture-proxy.js";
import { readInstructionFiles } from "../capture/instruction-files.js";
import { knownTexts } from "../capture/known-texts.js";
import { UserError } from "../errors.js";
import { readAgentSkills } from "../skills/agent-skills.js";
import { folderNameArg } from "./arg-values.js";
import { usageError } from "./args.js";
import { KEEP_SECRETS_HELP, keepSecretsFlag } from "./keep-secrets-flag.js";
import { parsePort } from "./serve.js";

export const CAPTURE_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  name: { type: "string" },
  "no-db": { type: "boolean" },
  redact: { type: "string", multiple: true },
  "redact-body": { type: "string", multiple: true },
  otel: { type: "string" },
  "keep-secrets": { type: "boolean" },
  "cache-diagnostics": { type: "boolean" },
} as const;

/** The help lines of CAPTURE_OPTIONS but --name and --otel, whose text differs per command. */
export const CAPTURE_FLAGS_HELP = `  --port N        port to listen on (default 0: a free port)
  --host HOST     address to listen on (default 127.0.0.1)
  --runs DIR      where the run folder and payload-probe.db go (default: runs/)
  --no-db         do not write payload-probe.db
  --redact NAME   also store query parameter NAME as [redacted] (repeatable;
                  any case). Always redacted: the list in docs/capture.md
                  (key, token, code, sig, X-Amz-Signature …) and names
                  containing token, secret, passw, signature, credential
  --redact-body REGEX
                  replace every match of REGEX (JavaScript syntax) in stored
                  request and response bodies with [redacted] (repeatable)
${KEEP_SECRETS_HELP}
  --cache-diagnostics
                  ask the provider why each Messages or Responses request
                  missed its prompt cache: adds the diagnostics fields to
                  the body sent upstream, chained to the previous response
                  of the same conversation (docs/capture.md); the run keeps
                  the body as the agent sent it`;

/** An `--upstream…` value: an http or https URL, as given (its userinfo is the proxy's to take apart). */
export function parseUpstream(command: string, flag: string, value: string | undefined): string {
  if (value === undefined) throw usageError(command, `--${flag} URL is required`);
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") return value;
  } catch {
    // Reported below with what was expected.
  }
  throw new UserError(`${command}: --${flag} expected an http or https URL, got "${value}"`);
}

function parseBodyPattern(command: string, source: string): RegExp {
  try {
    return new RegExp(source, "g");
  } catch (error) {
    throw new UserError(
      `${command}: --redact-body expected a regular expression, got "${source}": ${(error as Error).message}`,
    );
  }
}

interface CaptureValues {
  port?: string;
  host?: string;
  name?: string;
  "no-db"?: boolean;
  redact?: string[];
  "redact-body"?: string[];
  "keep-secrets"?: boolean;
  "cache-diagnostics"?: boolean;
}

/** The proxy's options from the shared flags; the run is named `--name`, else `defaultName`. */
export function captureSettings(command: string, values: CaptureValues, defaultName: string) {
  return {
    name: folderNameArg(command, "name", values.name) ?? defaultName,
    port: parsePort(command, values.port),
    host: values.host,
    database: !values["no-db"],
    redactQuery: values.redact,
    redactBody: (values["redact-body"] ?? []).map((source) => parseBodyPattern(command, source)),
    keepSecrets: keepSecretsFlag(command, values["keep-secrets"]),
    cacheDiagnostics: values["cache-diagnostics"] === true,
    // The recorded command runs here: the instruction files and skills it may inline are this folder's,
    // its parents' (and for skills, the user's).
    knownTexts: knownTexts(readInstructionFiles(process.cwd()), readAgentSkills(process.cwd())),
  } satisfies Partial<CaptureProxyOptions>;
}
