import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { loadProbeFile } from "../../src/probes/load.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

/** A probe file with p1's essentials plus `extra` lines, in a temp folder. */
function probeWith(extra: string, script = "[{text: DONE}]"): string {
  const file = join(tempDir("load-test-"), "probe.yaml");
  writeFileSync(file, `name: t\nprompts: [hi]\nmodel:\n  script: ${script}\n${extra}`);
  return file;
}

const bad = (name: string) => join(PROJECT_ROOT, "fixtures/bad", name);

/** The UserError a load throws, so its file and field can be checked. */
async function loadError(file: string): Promise<UserError> {
  try {
    await loadProbeFile(file, PROJECT_ROOT);
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error(`${file} loaded without an error`);
}

describe("probe files are validated on load, every problem naming the file and the field (docs/architecture.md and docs/probes.md)", () => {
  it("p1 loads", async () => {
    const probe = await loadProbeFile(join(PROJECT_ROOT, "probes/p1.yaml"), PROJECT_ROOT);
    expect(probe.agent.tools).toEqual(["read", "mcp"]);
    expect(probe.model.script).toHaveLength(4);
  });

  it("malformed YAML names the file", async () => {
    const error = await loadError(bad("bad-yaml.yaml"));
    expect(error.file).toBe(bad("bad-yaml.yaml"));
    expect(error.message).toMatch(new RegExp(`^${bad("bad-yaml.yaml")}: expected valid YAML \\(.+\\)$`));
  });

  it("agent.kind names an agent payload-probe can run, rather than silently running another", async () => {
    const error = await loadError(bad("unknown-agent.yaml"));
    expect(error.field).toBe("agent.kind");
    expect(error.message).toContain('expected "runtime" or "pi"');
  });

  it("an unknown field is named with its dotted path and the fields allowed there", async () => {
    const error = await loadError(bad("unknown-field.yaml"));
    expect(error.field).toBe("agent.tols");
    expect(error.message).toContain(
      `${bad("unknown-field.yaml")}: field "agent.tols": unknown field; expected one of kind, tools,`,
    );
  });

  it("a value of the wrong type is named with what was expected", async () => {
    const error = await loadError(bad("wrong-type.yaml"));
    expect(error.message).toBe(
      `${bad("wrong-type.yaml")}: field "expect.requests": expected a whole number of requests`,
    );
  });

  it("a missing MCP config names the probe field and the config path", async () => {
    const error = await loadError(bad("missing-config.yaml"));
    expect(error.field).toBe("agent.mcp.config");
    expect(error.message).toContain(join(PROJECT_ROOT, "fixtures/bad/no-such-mcp-config.json"));
  });

  it("a missing probe file is an input error", async () => {
    expect((await loadError(bad("no-such-probe.yaml"))).message).toBe(
      `${bad("no-such-probe.yaml")}: probe file not found`,
    );
  });

  it("an empty value reads as absent, so the field takes its default", async () => {
    const probe = await loadProbeFile(probeWith("title:\nagent:\n  tools:\n  noTools:\n"), PROJECT_ROOT);
    expect(probe.title).toBe("");
    expect(probe.agent.tools).toBeUndefined();
    expect(probe.agent.noTools).toBe(false);
  });

  it("a script step is checked as the kind of step it names", async () => {
    expect((await loadError(probeWith("", "[{call: read, args: 5}]"))).message).toContain(
      'field "model.script[0].args": expected a mapping or a raw JSON string',
    );
    expect((await loadError(probeWith("", "[{calls: [{call: read}, {args: {}}]}]"))).field).toBe(
      "model.script[0].calls[1].call",
    );
    expect((await loadError(probeWith("", "[{text: hi, call: read}]"))).message).toContain(
      'field "model.script[0]": expected {text: ...}, {call: name, args: ...} or {calls: [...]}',
    );
  });

  it("record keys and regular expressions are checked with the field named", async () => {
    const zero = await loadError(probeWith("expect:\n  toolResults:\n    0: {equals: x}\n"));
    expect(zero.message).toContain('field "expect.toolResults.0": expected a tool result number from 1');
    const regex = await loadError(probeWith('markers:\n  m: {match: "/(/"}\n'));
    expect(regex.message).toContain(
      'field "markers.m.match": expected a valid regular expression (Unterminated group)',
    );
  });
});
