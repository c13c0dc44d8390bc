import { tmpdir } from "node:os";
import { basename } from "node:path";
import { parseArgs } from "node:util";
import { AGENT_POINTERS, commandEnvironment, pointerCaveats } from "../agents/agent-pointers.js";
import { codexChatgptSignIn } from "../agents/codex-pointer.js";
import type { OtelExport } from "../analysis/otel/otel-export.js";
import { LiveViewPart } from "../analysis/view/live-view.js";
import type { FinishedExchange } from "../capture/capture.js";
import {
  type CaptureProxy,
  type CaptureProxyOptions,
  type ProxyOrigins,
  startCaptureProxy,
} from "../capture/capture-proxy.js";
import { runCaptureSession, type SessionPart } from "../capture/capture-session.js";
import { type LocalCertificate, localCertificate } from "../capture/local-tls.js";
import { type UserAuthority, userAuthority } from "../capture/user-ca.js";
import { isSafeName } from "../files/safe-path.js";
import { type CommandEnd, runCommand } from "../processes/foreground-command.js";
import {
  clearDeadSessions,
  endSessionProcesses,
  makeSessionDir,
  SESSION_MARK,
  type SessionDir,
  watchSession,
} from "../processes/session-dir.js";
import { cliName } from "../text/invoked-as.js";
import { printable } from "../text/terminal-text.js";
import { wrapLine } from "../text/text-wrap.js";
import { parseCommand, usageError } from "./args.js";
import { CAPTURE_FLAGS_HELP, CAPTURE_OPTIONS, captureSettings } from "./capture-flags.js";
import { findProgram } from "./find-program.js";
import { openPage } from "./open-page.js";
import { OTEL_FLAG_HELP, otelFlag, otelLivePart } from "./otel-flag.js";
import { exchangeLog } from "./proxy-log.js";
import { FORWARD_HELP, FORWARD_OPTIONS, forwardEnvironment, forwarding, forwardTargets } from "./record-forward.js";
import { proxyBases, RECORD_ROUTES, recordRoutes, routesHelp, UPSTREAM_OPTIONS } from "./record-routes.js";
import { runRef, seeItLine } from "./see-it.js";
import { liveViewFlag, VIEW_SWITCH_HELP, VIEW_SWITCH_OPTIONS } from "./view-flag.js";

/** The agents record points, as lines of at most 80 columns for the help. */
function pointedAgents(): string {
  const lines = [" "];
  for (const { agent } of AGENT_POINTERS) {
    const line = lines[lines.length - 1]!;
    if (line.length + agent.length + 2 > 80) lines.push(`  ${agent},`);
    else lines[lines.length - 1] = `${line} ${agent},`;
  }
  return lines.join("\n").replace(/,$/, "");
}

export const help = `Usage: payload-probe record [options] -- <command> [args…]

Runs <command> at your terminal and captures every model request it makes. A
capture proxy starts first, on one port, with one route per provider:
${routesHelp()}
The command runs with an environment that points the known agents there:
  ANTHROPIC_BASE_URL=<proxy>/anthropic
  ANTHROPIC_VERTEX_BASE_URL=<proxy>/vertex/v1 (Claude Code on Vertex AI)
  ENABLE_TOOL_SEARCH=true, unless set (Claude Code turns its tool search off
    behind a proxy; this keeps the requests it sends to Anthropic)
  OPENAI_BASE_URL=<proxy>/openai/v1
  GOOGLE_GEMINI_BASE_URL=<proxy>/gemini
  CODE_ASSIST_ENDPOINT=<proxy>/code-assist
  Codex: a temporary CODEX_HOME; signed in with ChatGPT, chatgpt_base_url and
    openai_base_url at the HTTPS listener and CODEX_CA_CERTIFICATE trusting it
    (auth.json linked)
Agents that read only a config file get a temporary one, removed afterwards;
your own files are left alone (one whose config cannot be read is left
unpointed, and record says so). The agents pointed:
${pointedAgents()}

Credentials pass through to the provider in headers and are never stored.
record writes to stderr only; stdout is the command's. Before the command
starts it says where the proxy listens and where the run goes, and what it
can see would keep an agent from the proxy (a Claude Code settings file with
its own base URL; a Gemini CLI with no auth type selected in its settings,
which stops at "Invalid auth method selected", or one on Vertex AI); when it
ends,
the proxy's summary and the commands to look further. A line per request is
printed as it is captured only when stderr is not a terminal (an agent drawing
on the terminal would be torn by it). Ctrl-C and Ctrl-\\ at a terminal reach the
command directly; SIGTERM and SIGHUP sent to record (and SIGINT away from a
terminal) are passed on, and a second one kills the command. record waits for
the command, stops the proxy (what is queued is written), removes its
temporary files and exits with the command's code; nothing it started is left
running.

  --upstream URL  forward every route to URL (our mock: http://127.0.0.1:PORT)
  --upstream-anthropic URL, --upstream-openai URL, --upstream-gemini URL,
  --upstream-code-assist URL, --upstream-chatgpt URL, --upstream-vertex URL
                  forward that route to URL (wins over --upstream)
${FORWARD_HELP}
  --codex-http    Codex sends its Responses requests as HTTP POSTs instead of
                  over its default WebSocket (each turn is a full record
                  either way); not with a ChatGPT sign-in, whose provider
                  Codex keeps
  --name NAME     the run folder's name (letters, digits, '.', '_', '-'); by
                  default the program's name (claude → <runs>/claude/), or
                  record when that is not a safe name
${CAPTURE_FLAGS_HELP}
${OTEL_FLAG_HELP}; each request is sent as it is captured
${VIEW_SWITCH_HELP}
  --open          open the viewer in the browser (xdg-open) as soon as it is
                  served (implies --view): a full-screen agent may wipe its address
  -h, --help      show this help

Exit: the command's exit code (128 + N when signal N ended it); 127 when the
command is not found, 126 when it cannot be run; 2 bad usage, a proxy that
could not start (port in use, bad --upstream…) or a config of the command's own
agent that cannot be read (codex, pi, opencode): the command never starts.`;

const OPTIONS = {
  ...UPSTREAM_OPTIONS,
  ...CAPTURE_OPTIONS,
  ...VIEW_SWITCH_OPTIONS,
  ...FORWARD_OPTIONS,
  "codex-http": { type: "boolean" },
  open: { type: "boolean" },
} as const;

/**
 * Splits record's own flags from the command: at `--`, else at the first word that is not a flag or
 * a flag's value (`record claude -p hi` runs `claude -p hi`).
 */
function splitCommand(argv: string[]): { own: string[]; command: string[] } {
  const dashes = argv.indexOf("--");
  if (dashes >= 0) return { own: argv.slice(0, dashes), command: argv.slice(dashes + 1) };
  // With the two flags parseCommand adds, so `--runs DIR` is read as a flag and its value.
  const options = { ...OPTIONS, runs: { type: "string" }, help: { type: "boolean", short: "h" } } as const;
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const first = tokens.find((token) => token.kind === "positional");
  return first ? { own: argv.slice(0, first.index), command: argv.slice(first.index) } : { own: argv, command: [] };
}

/** The run's default name: the program's file name made a safe name, else `record`. */
export function defaultRunName(program: string): string {
  const name = basename(program)
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[.-]+/, "")
    .slice(0, 64);
  return isSafeName(name) ? name : "record";
}

/** A line of record's own on stderr; `fold` breaks a long one at words to 80 columns (a caveat naming files). */
function say(line: string, fold = false): void {
  const text = `record: ${printable(line)}`;
  process.stderr.write(`${fold ? wrapLine(text, 80, 8, true).join("\n") : text}\n`);
}

/** The command's program, or the exit code and line of a shell that cannot run it (nothing started yet). */
function checkProgram(word: string): number | undefined {
  const lookup = findProgram(word, process.env, process.cwd());
  if ("found" in lookup) return undefined;
  if ("missing" in lookup) say(`${word}: command not found (nothing was started)`);
  else say(`${lookup.notExecutable}: not executable (nothing was started)`);
  return "missing" in lookup ? 127 : 126;
}

/** Before the command starts: where the proxy listens, what each route forwards to, where the run goes. */
function announce(proxy: CaptureProxy, forwardTo: Map<string, string> | undefined): void {
  const secure = proxy.secureOrigin ? ` and ${proxy.secureOrigin} (for Codex's ChatGPT sign-in)` : "";
  say(`proxy ${proxy.origin}${secure}, run ${proxy.runId}`);
  if (forwardTo) {
    say("  the command's HTTPS proxy: the model APIs' hosts recorded, others tunnelled");
    for (const [host, upstream] of forwardTo) say(`  ${host} → ${upstream}`);
  } else for (const route of proxy.routes) say(`  ${route.prefix} → ${route.upstream}`);
  say(`capturing to ${proxy.liveDir}, moved to ${proxy.dir} when the command ends`);
}

/** What a replaced variable still gives the command (`--forward` keeps the user's certificates). */
const REPLACED_HINTS: Record<string, string> = {
  NODE_EXTRA_CA_CERTS: " (its certificates are kept beside record's authority)",
  SSL_CERT_FILE: " (its roots are in record's bundle)",
  HTTPS_PROXY: " (record reaches the hosts directly, not through yours)",
};

/** Says which of the user's variables the command sees replaced (a gateway of theirs is not used then). */
function tellReplaced(user: NodeJS.ProcessEnv, env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) {
    const theirs = user[name];
    // Their value is not shown: a URL may carry credentials.
    if (theirs === undefined || theirs === "" || theirs === value) continue;
    const hint =
      REPLACED_HINTS[name] ?? (name.endsWith("_BASE_URL") ? " (to forward to yours, give it to --upstream-…)" : "");
    say(`${name} is replaced for the command${hint}`, true);
  }
}

interface Seen {
  exchanges: number;
  /** The first request with a record, for `show`. */
  firstSeq: number | undefined;
  unrouted: number;
}

/** What record learns from the exchanges, for what it says when the command has ended. */
function watchExchanges(lines: boolean) {
  const seen: Seen = { exchanges: 0, firstSeq: undefined, unrouted: 0 };
  return {
    seen,
    onFinished(exchange: FinishedExchange): void {
      seen.exchanges++;
      if (exchange.record) seen.firstSeq ??= exchange.seq;
    },
    onUnrouted(method: string, path: string): void {
      seen.unrouted++;
      if (lines) say(`no route for ${method} ${path}: answered 404`);
    },
  };
}

/** The name of record's session folders in the system's temp folder: `payload-probe-record-XXXXXX`. */
const SESSION_PREFIX = "payload-probe-record-";

/** A private folder for the config files the pointers write, and the watch that clears it should record die. */
function openSessionDir(): SessionDir {
  clearDeadSessions(SESSION_PREFIX);
  const session = makeSessionDir(SESSION_PREFIX);
  watchSession(session.path, tmpdir());
  return session;
}

/** The session's end: what the command left running (a daemon started from the session's config) goes with it. */
function closeSessionDir(session: SessionDir): void {
  endSessionProcesses(session.path);
  session.remove();
}

/** The command's environment pointed at the proxy, and what record says of it before the command starts. */
interface Pointed {
  env: NodeJS.ProcessEnv;
  tell(): void;
}

/**
 * Points the agents at the proxy at `origin`, before its run is opened: a config the command's own
 * agent cannot read stops record here (exit 2, no run touched, nothing started); any other agent's is
 * said as a warning and that agent is left unpointed (agents/agent-pointers.ts, commandEnvironment).
 */
function pointAt(origins: ProxyOrigins, session: SessionDir, program: string, reach: Reach): Pointed {
  if ("authority" in reach) return forwardedAt(origins.origin, session, reach.authority);
  const bases = proxyBases(origins.origin, origins.secureOrigin);
  const { codexHttp, certificate } = reach;
  const authority = certificate?.authority;
  const ctx = { bases, tempDir: session.path, env: process.env, cwd: process.cwd(), codexHttp, authority };
  const { env, unpointed } = commandEnvironment(ctx, program);
  return {
    env: { ...env, [SESSION_MARK]: session.path },
    tell() {
      for (const line of unpointed) say(line, true);
      tellReplaced(process.env, env);
      for (const caveat of pointerCaveats(ctx)) say(caveat, true);
    },
  };
}

/**
 * `--forward`: the command's HTTPS proxy variables and certificate bundles name the proxy and the
 * user's authority; no base URL changes, so the agent talks to its real host (a signed request stays valid).
 */
function forwardedAt(origin: string, session: SessionDir, authority: UserAuthority): Pointed {
  const env = { ...process.env, ...forwardEnvironment(origin, authority.certPem, session.path, process.env) };
  return {
    env: { ...env, [SESSION_MARK]: session.path },
    tell: () => tellReplaced(process.env, env),
  };
}

/** How the command reaches the proxy: base URLs (and the session's certificate), or the proxy variables. */
type Reach = { codexHttp: boolean; certificate: LocalCertificate | undefined } | { authority: UserAuthority };

interface RecordPlan {
  command: string[];
  name: string;
  runsDir: string;
  values: { open?: boolean; "codex-http"?: boolean };
  /** What the capture proxy takes besides its listeners. */
  proxy: Omit<CaptureProxyOptions, "onFinished" | "onUnrouted" | "onListening">;
  otel: OtelExport | undefined;
  wantsView: boolean;
  reach: Reach;
  /** `--forward-to`: the hosts intercepted and where each goes (said before the command starts). */
  forwardTo: Map<string, string> | undefined;
}

/**
 * The capture session of record (capture/capture-session.ts): the proxy, its environment built as
 * soon as it listens, the live log, the viewer and the OTel export, closed in the session's order
 * (viewer, summary, spans) whatever fails; then the outcome. Resolves with the command's exit code.
 */
async function recordSession(plan: RecordPlan, session: SessionDir): Promise<number> {
  const lines = !process.stderr.isTTY;
  const watch = watchExchanges(lines);
  const view = plan.wantsView ? new LiveViewPart({ name: plan.name }, say) : null;
  let end: CommandEnd | undefined;
  const log = recordLog(exchangeLog("record", lines), watch, view, () => end, plan);
  let pointed: Pointed | undefined;
  let proxy: CaptureProxy | undefined;
  const start = async (onFinished: (exchange: FinishedExchange) => void) => {
    const onListening = (origins: ProxyOrigins) => {
      pointed = pointAt(origins, session, plan.command[0]!, plan.reach);
    };
    proxy = await startCaptureProxy({ ...plan.proxy, onFinished, onUnrouted: watch.onUnrouted, onListening });
    announce(proxy, plan.forwardTo);
    return proxy;
  };
  const parts = [otelLivePart(plan.otel, plan.name), log, ...(view ? [view] : [])];
  await runCaptureSession(start, parts, async () => {
    if (view?.view && plan.values.open) openPage(view.view.url, say);
    pointed!.tell();
    try {
      end = await runCommand(plan.command, pointed!.env, process.cwd());
    } finally {
      closeSessionDir(session);
    }
    // A command that never ran sent nothing: its empty run must not replace the previous one.
    if (end.failed) proxy!.dropIfEmpty();
  });
  tellOutcome(proxy!, plan.runsDir, plan.name, watch.seen);
  return end!.exitCode;
}

/** record's live log: the exchange lines and what record learns, and at the end the command's failure, the summary and the viewer's address. */
function recordLog(
  log: ReturnType<typeof exchangeLog>,
  watch: ReturnType<typeof watchExchanges>,
  view: LiveViewPart | null,
  end: () => CommandEnd | undefined,
  plan: RecordPlan,
): SessionPart<CaptureProxy> {
  return {
    onFinished(exchange) {
      log.onFinished(exchange);
      watch.onFinished(exchange);
    },
    close(proxy) {
      const failed = end()?.failed;
      if (failed) say(`${plan.command[0]}: could not be started: ${failed}`);
      log.close();
      // Said again after the summary: a full-screen agent (pi) wipes the line printed before it started.
      if (view?.view)
        say(
          `the viewer was at ${view.view.url} (stopped with the recording; 'view ${runRef(plan.name, proxy.dir, plan.runsDir)}' writes the page)`,
        );
    },
  };
}

export async function main(argv: string[]): Promise<number> {
  const { own, command } = splitCommand(argv);
  const args = parseCommand(own, { name: "record", help, options: OPTIONS, positionals: [] });
  if (typeof args === "number") return args;
  if (command.length === 0) throw usageError("record", "missing the command to run after --");
  const { values, runsDir } = args;
  const routes = recordRoutes(values);
  const settings = captureSettings("record", values, defaultRunName(command[0]!));
  const cannotRun = checkProgram(command[0]!);
  if (cannotRun !== undefined) return cannotRun;
  const wantsView = values.open === true || liveViewFlag("record", values, process.stdout.isTTY === true);
  const otel = await otelFlag(values.otel);
  const forward = forwarding(values.forward === true, command);
  const forwardTo = forward ? forwardTargets(values["forward-to"]) : undefined;
  if (!forwardTo && values["forward-to"]) throw usageError("record", "--forward-to is for --forward");
  if (forward?.auto) say(forward.auto, true);
  const authority = forwardTo && (await userAuthority());
  // Codex signed in with ChatGPT reaches its backend over HTTPS only: a listener with a certificate of the session's own.
  const certificate = !forwardTo && codexChatgptSignIn(process.env) ? await localCertificate() : undefined;
  const plan = {
    command,
    name: settings.name,
    runsDir,
    values,
    proxy: {
      routes,
      runsDir,
      ...settings,
      ...(certificate && { secure: certificate }),
      ...(authority && { forward: { authority, forwardTo, onRefused: (line: string) => say(line, true) } }),
    },
    otel,
    wantsView,
    reach: authority ? { authority } : { codexHttp: values["codex-http"] === true, certificate },
    forwardTo,
  };
  const session = openSessionDir();
  try {
    return await recordSession(plan, session);
  } finally {
    // Already closed once the command has run; this is for a session that stopped before it.
    closeSessionDir(session);
  }
}

/** After the summary: requests that found no route, and where to look further (or why there is nothing). */
function tellOutcome(proxy: CaptureProxy, runsDir: string, name: string, seen: Seen): void {
  const prefixes = RECORD_ROUTES.map((route) => route.prefix).join(", ");
  if (seen.unrouted > 0) say(`${seen.unrouted} request(s) under no route (${prefixes}) were answered 404`);
  if (seen.firstSeq !== undefined) process.stderr.write(`${seeItLine(name, proxy.dir, runsDir, seen.firstSeq)}\n`);
  else if (seen.exchanges > 0)
    say(
      `no request was of an API the capture reads: ${cliName()} report ${runRef(name, proxy.dir, runsDir)} lists them`,
    );
  else say("no request reached the proxy: does the command read the variables record sets? (--help)");
}
