/** `payload-probe ca`: where the authority `record --forward` trusts is, and its removal. */
import { existsSync } from "node:fs";
import { authorityCertPath, authorityDir, removeUserAuthority } from "../capture/user-ca.js";
import { parseCommand } from "./args.js";

export const help = `Usage: payload-probe ca [--remove] [--json]

record --forward makes a certificate authority once for you and keeps it in
your cache (${"$"}XDG_CACHE_HOME/payload-probe/ca, else ~/.cache/payload-probe/ca):
its key readable by you alone (0600), never written in a run. Only the
commands record runs trust it, and only for their session. With no flag, ca
says where it is and whether it exists.

  --remove        remove the authority (its key and certificate); the next
                  record --forward makes a new one
  --json          print {"dir", "certificate", "exists"} (with --remove,
                  "removed") as JSON
  -h, --help      show this help

Exit: 0 done; 2 bad usage, or the folder holds files ca did not make
(nothing is removed then).`;

const OPTIONS = { remove: { type: "boolean" }, json: { type: "boolean" } } as const;

export async function main(argv: string[]): Promise<number> {
  const args = parseCommand(argv, { name: "ca", help, options: OPTIONS, positionals: [], runs: false });
  if (typeof args === "number") return args;
  const dir = authorityDir();
  const certificate = authorityCertPath();
  if (args.values.remove) {
    const removed = removeUserAuthority();
    if (args.values.json) process.stdout.write(`${JSON.stringify({ dir, certificate, removed })}\n`);
    else process.stdout.write(removed ? `removed ${dir}\n` : `no authority at ${dir}: nothing to remove\n`);
    return 0;
  }
  const exists = existsSync(certificate);
  if (args.values.json) process.stdout.write(`${JSON.stringify({ dir, certificate, exists })}\n`);
  else process.stdout.write(exists ? `${certificate}\n` : `no authority yet (record --forward makes it in ${dir})\n`);
  return 0;
}
