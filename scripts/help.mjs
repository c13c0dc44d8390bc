/**
 * Imported first by every script here: `--help` (or `-h`) prints the script's opening comment,
 * which says what it does and how to call it, and exits 0 before the script does any work.
 */
import { readFileSync } from "node:fs";

if (process.argv.includes("--help") || process.argv.includes("-h")) {
  const lines = readFileSync(process.argv[1], "utf8").split("\n");
  if (lines[0]?.startsWith("#!")) lines.shift();
  const opening = [];
  if (lines[0]?.startsWith("/**")) {
    for (const line of lines.slice(1)) {
      if (line.trim().startsWith("*/")) break;
      opening.push(line.replace(/^\s*\* ?/, ""));
    }
  } else {
    for (const line of lines) {
      if (!line.startsWith("//")) break;
      opening.push(line.replace(/^\/\/ ?/, ""));
    }
  }
  process.stdout.write(`${opening.join("\n").trim()}\n`);
  process.exit(0);
}
