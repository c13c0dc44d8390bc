#!/usr/bin/env node
// Writes probes/probe.schema.json, the JSON Schema of probe files, from the zod schema the loader
// parses with (src/probes/schema.ts), so editors that read `# yaml-language-server: $schema=…`
// complete and check probe YAML by the same rules; and probes/mcp-config.schema.json, the MCP config's,
// from src/mcp/config.ts. Reads the built code (./run.sh once first).
//
//   node scripts/gen-probe-schema.mjs                  # rewrite probes/probe.schema.json
//   node scripts/gen-probe-schema.mjs --check [FILE]   # exit 1 when FILE (default both committed ones) is not current
//
// The schema describes what a file may hold (zod's input side): defaults are filled in by the
// loader, and checks that need the file system (an MCP config that exists) stay in the loader.
import "./help.mjs";
import { readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { probeSchema } = await import(join(root, "dist/probes/schema.js"));
const { layerSchema } = await import(join(root, "dist/mcp/config.js"));

const text = (schema) => `${JSON.stringify(schema, null, 2)}\n`;
/** Each schema file, by name: probe files, and the MCP config files their agent.mcp.config names. */
const schemas = {
  "probe.schema.json": text({
    ...z.toJSONSchema(probeSchema, { io: "input", unrepresentable: "throw" }),
    title: "payload-probe probe file",
    description: "One experiment: the agent's set-up, the scripted model, the prompts, markers and expectations.",
  }),
  // The config's checks written as functions carry their JSON Schema in `meta` (src/mcp/config.ts).
  "mcp-config.schema.json": text({
    ...z.toJSONSchema(layerSchema, { io: "input", unrepresentable: "any" }),
    title: "payload-probe MCP config file",
    description: "The MCP servers a probe's agent may use (mcpServers) and the adapter's settings; docs/mcp-config.md.",
  }),
};

const args = process.argv.slice(2);
if (args[0] === "--check") {
  const files = args[1] ? [args[1]] : Object.keys(schemas).map((name) => join(root, "probes", name));
  for (const file of files) {
    let committed = "";
    try {
      committed = readFileSync(file, "utf8");
    } catch {}
    if (committed !== (schemas[basename(file)] ?? schemas["probe.schema.json"])) {
      console.error(`${file} is not current; run: node scripts/gen-probe-schema.mjs`);
      process.exit(1);
    }
  }
} else {
  for (const [name, schemaText] of Object.entries(schemas)) writeFileSync(join(root, "probes", name), schemaText);
}
