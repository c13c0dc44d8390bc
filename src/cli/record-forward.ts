/**
 * `record --forward`: the command reaches the model APIs through the proxy as its HTTPS proxy rather
 * than through base URLs, so any client that reads the usual proxy variables is recorded, and a signed
 * request (AWS SigV4) reaches its host as it was signed. The command trusts the user's authority
 * (capture/user-ca.ts) through the variables each language's clients read.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { rootCertificates } from "node:tls";
import { codexBedrockProvider } from "../agents/codex-config.js";
import { UserError } from "../errors.js";
import { parseUpstream } from "./capture-flags.js";

export const FORWARD_OPTIONS = {
  forward: { type: "boolean" },
  "forward-to": { type: "string", multiple: true },
} as const;

export const FORWARD_HELP = `  --forward       be the command's HTTPS proxy instead of pointing base URLs:
                  HTTPS_PROXY and HTTP_PROXY (and lower-case) name the proxy,
                  and the command trusts a certificate authority made once
                  for you (in your cache; 'payload-probe ca --help'). The
                  model APIs' hosts (api.anthropic.com, api.openai.com,
                  generativelanguage.googleapis.com, Bedrock's and Vertex
                  AI's, …) are recorded; every other host is tunnelled
                  untouched and not recorded. Signed requests (Bedrock's
                  SigV4) stay valid: nothing is changed on the way. On
                  by itself for Codex with an Amazon Bedrock provider
                  (amazon-bedrock, amazon-bedrock-runtime) selected
  --forward-to HOST=URL
                  with --forward, send HOST's requests to URL instead of
                  HOST itself (a local mock); HOST is recorded (repeatable)`;

/**
 * Whether record is the command's forward proxy: with `--forward`, or by itself for a command that
 * only the forward proxy can record: Codex on one of its Amazon Bedrock providers, whose requests are
 * signed for Bedrock's host (agents/codex-config.ts). `auto` is the line that says why.
 */
export function forwarding(flag: boolean, command: readonly string[]): { auto?: string } | undefined {
  if (flag) return {};
  if (basename(command[0] ?? "") !== "codex") return undefined;
  const bedrock = codexBedrockProvider(process.env, command.slice(1));
  if (bedrock === undefined) return undefined;
  return {
    auto: `Codex's model provider is ${bedrock} (Amazon Bedrock, each request signed for its host): record is the command's HTTPS proxy, as with --forward`,
  };
}

/** `--forward-to` values as a map of host to origin; bad input names the flag and the value. */
export function forwardTargets(values: string[] | undefined): Map<string, string> {
  const targets = new Map<string, string>();
  for (const value of values ?? []) {
    const at = value.indexOf("=");
    const host = value.slice(0, at).toLowerCase();
    if (at <= 0 || !/^[a-z0-9.-]+$/.test(host))
      throw new UserError(
        `record: --forward-to expected HOST=URL (api.anthropic.com=http://127.0.0.1:8080), got "${value}"`,
      );
    targets.set(host, parseUpstream("record", "forward-to", value.slice(at + 1)));
  }
  return targets;
}

/** Where this system keeps its trusted roots, first found wins (Debian, Fedora, Alpine and macOS, SUSE). */
const SYSTEM_BUNDLES = [
  "/etc/ssl/certs/ca-certificates.crt",
  "/etc/pki/tls/certs/ca-bundle.crt",
  "/etc/ssl/cert.pem",
  "/etc/ssl/ca-bundle.pem",
];

/**
 * The roots a client trusts when SSL_CERT_FILE does not name a file: the user's own SSL_CERT_FILE,
 * else the system's bundle, else Node's. SSL_CERT_FILE replaces a client's roots, so the bundle given
 * the command must hold them besides the authority, or every tunnelled host would fail.
 */
function systemRoots(env: NodeJS.ProcessEnv): string {
  const file = [env.SSL_CERT_FILE, ...SYSTEM_BUNDLES].find((path) => path && existsSync(path));
  return file ? readFileSync(file, "utf8") : rootCertificates.join("\n");
}

/** The user's NODE_EXTRA_CA_CERTS file's certificates, kept beside the authority's (none when unreadable). */
function extraCas(env: NodeJS.ProcessEnv): string {
  try {
    return env.NODE_EXTRA_CA_CERTS ? readFileSync(env.NODE_EXTRA_CA_CERTS, "utf8") : "";
  } catch {
    return "";
  }
}

/**
 * The variables the command runs with: the proxy for HTTPS and HTTP, local addresses kept off it, and
 * the authority trusted by Node (added to its roots), and by OpenSSL, Python's requests, curl, the AWS
 * SDKs, gRPC, Go and Rust's native roots (a whole bundle each: the system's roots and the authority).
 * Both files are written in `dir`, the session's folder, removed with it.
 */
export function forwardEnvironment(
  proxyOrigin: string,
  authorityPem: string,
  dir: string,
  env: NodeJS.ProcessEnv,
): NodeJS.ProcessEnv {
  const extra = join(dir, "forward-extra-ca.pem");
  writeFileSync(extra, `${authorityPem.trim()}\n${extraCas(env)}`);
  const bundle = join(dir, "forward-ca-bundle.pem");
  writeFileSync(bundle, `${systemRoots(env).trim()}\n${authorityPem.trim()}\n`);
  const noProxy = ["localhost", "127.0.0.1", "::1", env.NO_PROXY || env.no_proxy].filter(Boolean).join(",");
  return {
    HTTPS_PROXY: proxyOrigin,
    https_proxy: proxyOrigin,
    HTTP_PROXY: proxyOrigin,
    http_proxy: proxyOrigin,
    NO_PROXY: noProxy,
    no_proxy: noProxy,
    NODE_EXTRA_CA_CERTS: extra,
    SSL_CERT_FILE: bundle,
    REQUESTS_CA_BUNDLE: bundle,
    CURL_CA_BUNDLE: bundle,
    AWS_CA_BUNDLE: bundle,
    GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: bundle,
    GIT_SSL_CAINFO: bundle,
    CODEX_CA_CERTIFICATE: bundle,
  };
}
