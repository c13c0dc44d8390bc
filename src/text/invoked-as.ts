import { basename, relative } from "node:path";

/**
 * How the user started payload-probe, as a command they can type again from where they are, so every
 * hint we print (`see it: ./run.sh report p1`, `See './run.sh show --help'`) works as printed.
 * `run.sh` names itself, relative to the user's folder, in PAYLOAD_PROBE_INVOKED_AS; started through
 * the package's bin (`npm link`, `npm install -g`) the script is called `payload-probe`; otherwise it
 * is `node <the script's path>`.
 */
let invokedAs: string | undefined;
let throughRunSh = false;

/** A word as a POSIX shell reads it back: quoted only when it has to be. */
const SHELL_SAFE = /^[\w./@%+=:,-]+$/;
export const shellWord = (word: string) => (SHELL_SAFE.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);

/**
 * Reads how the CLI was started, once, at start-up, and takes run.sh's variables out of the environment
 * so the processes the CLI starts (pi, MCP servers, a nested payload-probe) do not inherit them.
 */
export function readInvokedAs(env: NodeJS.ProcessEnv = process.env, script = process.argv[1] ?? ""): string {
  const fromRunSh = env.PAYLOAD_PROBE_INVOKED_AS;
  delete env.PAYLOAD_PROBE_INVOKED_AS;
  throughRunSh = Boolean(fromRunSh);
  if (fromRunSh) invokedAs = shellWord(fromRunSh);
  else if (basename(script) === "payload-probe") invokedAs = "payload-probe";
  else invokedAs = `node ${shellWord(relative(process.cwd(), script) || script)}`;
  return invokedAs;
}

/** The command that starts payload-probe from the user's folder (`./run.sh`, `payload-probe`, `node dist/cli/main.js`). */
export function cliName(): string {
  return invokedAs ?? "payload-probe";
}

/** The command that runs one probe: run.sh takes a probe's name as its first word, the CLI needs `run`. */
export function probeCommand(probe: string): string {
  return throughRunSh ? `${cliName()} ${probe}` : `${cliName()} run ${probe}`;
}
