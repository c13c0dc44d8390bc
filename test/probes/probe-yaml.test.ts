import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseProbeYaml, readProbeText } from "../../src/probes/probe-yaml.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { userErrorOf } from "../fixtures/user-error.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

/** A probe file read and parsed, as the loader does for a text it has not validated before. */
const readProbeYaml = (file: string, root: string) => parseProbeYaml(file, readProbeText(file), root);

afterEach(removeTempDirs);

function yamlFile(text: string): { dir: string; file: string } {
  const dir = tempDir("probe-yaml-");
  const file = join(dir, "probe.yaml");
  writeFileSync(file, text);
  return { dir, file };
}

describe("a probe file's text is quoted in errors only when it lies inside the project (issue 8)", () => {
  const syntax = 'name: x\nprompts: ["hi"\nmodel: SECRET-7731\n';

  it("inside the root, a YAML error gives the parser's sentence and the line its excerpt ends on, in one line", () => {
    const { dir, file } = yamlFile(syntax);
    expect(userErrorOf(() => readProbeYaml(file, dir)).message).toBe(
      `${file}: expected valid YAML (Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1: model: SECRET-7731)`,
    );
  });

  it("outside the root, the same error gives reason and position only", () => {
    const { file } = yamlFile(syntax);
    expect(userErrorOf(() => readProbeYaml(file, PROJECT_ROOT)).message).toBe(
      `${file}: expected valid YAML (bad indent at line 3, column 1)`,
    );
  });

  it("a key that is not a plain name is shown by its line outside the root, as written inside it", () => {
    const { dir, file } = yamlFile('name: x\nagent:\n  tools: read\n  "pass: hunter2": 1\n');
    const path = ["agent", "pass: hunter2"];
    expect(readProbeYaml(file, PROJECT_ROOT).fieldName(path)).toBe("agent.<key at line 4>");
    expect(readProbeYaml(file, PROJECT_ROOT).fieldName(["agent", "tools"])).toBe("agent.tools");
    expect(readProbeYaml(file, dir).fieldName(path)).toBe("agent.pass: hunter2");
  });

  it("a file with control characters or invalid UTF-8 is binary, named without its bytes", () => {
    for (const bytes of [Buffer.from("name: x\u0001\n"), Buffer.from([0x6e, 0x3a, 0x20, 0xc3, 0x28])]) {
      const { dir, file } = yamlFile("");
      writeFileSync(file, bytes);
      expect(userErrorOf(() => readProbeYaml(file, dir)).message).toBe(
        `${file}: expected YAML text, but the file holds binary data`,
      );
    }
  });
});
