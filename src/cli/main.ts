#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CheckFailed, UserError } from "../errors.js";
import { allProbeNames, probeRoots } from "../probes/probe-names.js";
import { restoreExtraCaCerts } from "../processes/extra-ca-certs.js";
import { PROJECT_ROOT } from "../project-root.js";
import { cliName, probeCommand, readInvokedAs } from "../text/invoked-as.js";
import { nearest } from "../text/nearest.js";
import { printable } from "../text/terminal-text.js";
import { dropOutputToClosedPipes } from "./broken-pipe.js";

restoreExtraCaCerts();
readInvokedAs();
dropOutputToClosedPipes();

interface Command {
  main(argv: string[]): Promise<number>;
  help: string;
}

/** Each command is loaded only when it is used, so start-up pays for one command's modules. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  run: { summary: "run probes on the scripted model and check their expectations", load: () => import("./run.js") },
  skills: {
    summary: "list the skills discovery would load, from where, and every diagnostic",
    load: () => import("./skills.js"),
  },
  runs: {
    summary: "list every run kept, newest first: requests, conversations, tokens, cost, failures",
    load: () => import("./runs.js"),
  },
  report: {
    summary: "one row per request of a run: tools, tokens, sizes, roles, markers, prefix",
    load: () => import("./report.js"),
  },
  show: {
    summary: "one request decoded: tool definitions, system prompt, messages, tokens per segment",
    load: () => import("./show.js"),
  },
  view: {
    summary: "write a self-contained HTML page of a run (or two, side by side) to explore in a browser",
    load: () => import("./view.js"),
  },
  diff: {
    summary: "compare two runs request by request and locate each side's cache breaks",
    load: () => import("./diff.js"),
  },
  check: {
    summary: "run probes and compare every request's token and byte cost with baselines",
    load: () => import("./check.js"),
  },
  mock: {
    summary: "serve a probe's scripted model over HTTP (chat completions, SSE) and capture each request",
    load: () => import("./mock.js"),
  },
  agents: {
    summary: "install real agents (pi, Claude Code, Codex) at pinned versions into the user's cache",
    load: () => import("./agents.js"),
  },
  profile: {
    summary: "import a profile from a run's captured requests, to run the runtime with that agent's texts",
    load: () => import("./profile.js"),
  },
  proxy: {
    summary: "forward requests to a real provider unchanged and capture each one (no credentials stored)",
    load: () => import("./proxy.js"),
  },
  record: {
    summary: "run an agent (or any command) with its model requests captured through a proxy",
    load: () => import("./record.js"),
  },
  ca: {
    summary: "show or remove the certificate authority record --forward makes for you",
    load: () => import("./ca.js"),
  },
  export: {
    summary: "send captured runs to an OpenTelemetry collector as GenAI spans (OTLP/HTTP)",
    load: () => import("./export.js"),
  },
};

/** The overview; its last lines name the command the way the user started it (run.sh, PATH, node dist/cli/main.js). */
const usage = () => `Usage: payload-probe <command> [options]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join("\n")}

Run '${cliName()} <command> --help' for a command's options, '${cliName()} --version' for the version.
Exit codes: 0 ok, 1 a check did not hold, 2 bad usage or input, 3 internal error.`;

/** What an unknown first word was probably meant to be: a command, or a probe run.sh would have run. */
function unknownCommand(name: string): string {
  const command = nearest(name, Object.keys(COMMANDS));
  const probe = command ? undefined : nearest(name, probeRoots().flatMap(allProbeNames));
  const hint = command
    ? `; did you mean ${command}?`
    : probe
      ? `; did you mean the probe ${probe} (${probeCommand(probe)})?`
      : ".";
  return `payload-probe: unknown command "${name}"${hint} See '${cliName()} --help'.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name) {
    console.error(`payload-probe: missing <command>. See '${cliName()} --help'.`);
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    (await import("./help-text.js")).printHelp(usage());
    return 0;
  }
  if (name === "--version" || name === "-V") {
    const { version } = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    console.log(`payload-probe ${version}`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(unknownCommand(name));
    return 2;
  }
  return (await command.load()).main(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A message may quote what a capture or an input file holds.
    const said = (text: string) => printable(text, { lines: true });
    if (error instanceof UserError) {
      console.error(`payload-probe: ${said(error.message)}`);
      process.exitCode = 2;
    } else if (error instanceof CheckFailed) {
      console.error(`payload-probe: ${said(error.message)}`);
      for (const failure of error.failures) console.error(`  - ${said(failure)}`);
      process.exitCode = 1;
    } else {
      console.error("payload-probe: internal error (this is a bug):");
      console.error(error);
      process.exitCode = 3;
    }
  },
);
