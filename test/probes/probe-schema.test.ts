import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const SCHEMA = join(PROJECT_ROOT, "probes/probe.schema.json");
const probeFiles = readdirSync(join(PROJECT_ROOT, "probes")).filter((name) => name.endsWith(".yaml"));

/** `node scripts/gen-probe-schema.mjs --check FILE`, against the built dist/ as CI runs it. */
function checkSchema(file: string) {
  return spawnSync(process.execPath, [join(PROJECT_ROOT, "scripts/gen-probe-schema.mjs"), "--check", file], {
    encoding: "utf8",
    timeout: 120_000,
  });
}

describe("probes/probe.schema.json (issue 9)", () => {
  it("is what scripts/gen-probe-schema.mjs generates from the loader's zod schema", () => {
    const result = checkSchema(SCHEMA);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" });
  });

  it("a stale copy fails the check", () => {
    const stale = join(tempDir("probe-schema-"), "probe.schema.json");
    const schema = JSON.parse(readFileSync(SCHEMA, "utf8"));
    delete schema.properties.markers;
    writeFileSync(stale, `${JSON.stringify(schema, null, 2)}\n`);
    const result = checkSchema(stale);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("is not current");
  });

  it("every probe file names the schema on its first line and validates against it (ajv, an independent validator)", () => {
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(SCHEMA, "utf8")));
    expect(probeFiles.length).toBeGreaterThan(10);
    for (const name of probeFiles) {
      const text = readFileSync(join(PROJECT_ROOT, "probes", name), "utf8");
      expect(text.split("\n")[0], name).toBe("# yaml-language-server: $schema=./probe.schema.json");
      expect(validate(parseYaml(text)) ? [] : validate.errors, name).toEqual([]);
    }
  });

  it("refuses what the loader refuses: an unsafe name, an unknown field, a mapping as a scripted text", () => {
    const validate = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(SCHEMA, "utf8")));
    const probe = { name: "ok", prompts: ["hi"], model: { script: [{ text: "DONE" }] } };
    expect(validate(probe)).toBe(true);
    expect(validate({ ...probe, name: "../victim" })).toBe(false);
    expect(validate({ ...probe, agent: { tols: "read" } })).toBe(false);
    expect(validate({ ...probe, model: { script: [{ text: { a: 1 } }] } })).toBe(false);
  });
});

describe("probes/mcp-config.schema.json (issue 37)", () => {
  const MCP_SCHEMA = join(PROJECT_ROOT, "probes/mcp-config.schema.json");

  it("is what scripts/gen-probe-schema.mjs generates from the config loader's zod schema", () => {
    const result = checkSchema(MCP_SCHEMA);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: "" });
  });

  it("every shipped MCP config validates against it, and a wrong kind of value does not", () => {
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(
      JSON.parse(readFileSync(MCP_SCHEMA, "utf8")),
    );
    const configs = readdirSync(join(PROJECT_ROOT, "fixtures")).filter((name) => name.startsWith("mcp-"));
    expect(configs.length).toBeGreaterThan(3);
    for (const name of configs) {
      const config = JSON.parse(readFileSync(join(PROJECT_ROOT, "fixtures", name), "utf8"));
      expect(validate(config) ? [] : validate.errors, name).toEqual([]);
    }
    expect(validate({ mcpServers: { s: { command: "node", args: "server.js" } } })).toBe(false);
    expect(validate({ mcpServers: { s: { lifecycle: "sometimes" } } })).toBe(false);
    expect(validate({ settings: { directTools: "some" } })).toBe(false);
    expect(validate({ settings: { directTools: ["a_tool"] } })).toBe(true);
  });
});
