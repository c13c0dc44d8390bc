#!/usr/bin/env node
// Writes probes/probe.schema.json, the JSON Schema of probe files, from the zod schema the loader
// parses with (src/probes/schema.ts), so editors that read `# yaml-language-server: $schema=…`
// complete and check probe YAML by the same rules. Reads the built code (./run.sh once first).
//
//   node scripts/gen-probe-schema.mjs                  # rewrite probes/probe.schema.json
//   node scripts/gen-probe-schema.mjs --check [FILE]   # exit 1 when FILE (default the committed one) is not current
//
// The schema describes what a file may hold (zod's input side): defaults are filled in by the
// loader, and checks that need the file system (an MCP config that exists) stay in the loader.
import "./help.mjs";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { probeSchema } = await import(join(root, "dist/probes/schema.js"));

const schema = {
  ...z.toJSONSchema(probeSchema, { io: "input", unrepresentable: "throw" }),
  title: "payload-probe probe file",
  description: "One experiment: the agent's set-up, the scripted model, the prompts, markers and expectations.",
};
const text = `${JSON.stringify(schema, null, 2)}\n`;

const args = process.argv.slice(2);
if (args[0] === "--check") {
  const file = args[1] ?? join(root, "probes/probe.schema.json");
  let committed = "";
  try {
    committed = readFileSync(file, "utf8");
  } catch {}
  if (committed !== text) {
    console.error(`${file} is not current; run: node scripts/gen-probe-schema.mjs`);
    process.exit(1);
  }
} else {
  writeFileSync(join(root, "probes/probe.schema.json"), text);
}
