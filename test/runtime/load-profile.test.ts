import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mcpTextsSchema } from "../../src/mcp/texts-schema.js";
import { extensionTexts, loadProfile } from "../../src/runtime/load-profile.js";
import { DEFAULT_PROFILE_PATH } from "../../src/runtime/profile.js";
import { disclosureTextsSchema } from "../../src/skills/disclosure/texts-schema.js";
import { userErrorOf } from "../fixtures/user-error.js";
import { removeTempDirs, tempDir } from "./harness.js";

afterEach(removeTempDirs);

/** The default profile with one edit, written to a temp file. */
// biome-ignore lint/suspicious/noExplicitAny: the test edits the JSON freely, as a user editing the file would
function profileWith(edit: (profile: Record<string, any>) => void): string {
  const profile = JSON.parse(readFileSync(DEFAULT_PROFILE_PATH, "utf8"));
  edit(profile);
  const path = join(tempDir("profile-test-"), "profile.json");
  writeFileSync(path, JSON.stringify(profile));
  return path;
}

describe("profiles are checked when loaded, extension texts by their extension's schema (issue 9)", () => {
  it("the default profile loads, and both extensions' texts pass their schemas", () => {
    const profile = loadProfile();
    expect(profile.file).toBe(DEFAULT_PROFILE_PATH);
    expect(extensionTexts(profile, "mcp", mcpTextsSchema).proxy.usage.length).toBeGreaterThan(0);
    expect(extensionTexts(profile, "loadSkill", disclosureTextsSchema).environmentLines.length).toBeGreaterThan(0);
  });

  it("a missing runtime text names the profile and the field", () => {
    const path = profileWith((p) => {
      delete p.tools.grep.description;
    });
    const error = userErrorOf(() => loadProfile(path));
    expect(error.message).toBe(`${path}: field "tools.grep.description": expected a string`);
  });

  it("a template stands in for pi's sections; without one, a missing section names its field", () => {
    const templated = profileWith((p) => {
      for (const field of ["intro", "customTools", "docsHeader", "docsBullets"]) delete p.systemPrompt[field];
      p.systemPrompt.template = ["Tools:", "{TOOLS}"];
    });
    expect(loadProfile(templated).systemPrompt).toMatchObject({ template: ["Tools:", "{TOOLS}"] });
    const neither = profileWith((p) => {
      delete p.systemPrompt.docsBullets;
    });
    expect(userErrorOf(() => loadProfile(neither)).message).toBe(
      `${neither}: field "systemPrompt.docsBullets": expected a list of strings (the sections are needed when there is no template)`,
    );
  });

  it("an extension's section that is not a mapping is refused at load", () => {
    const path = profileWith((p) => {
      p.extensions.mcp = "texts";
    });
    expect(userErrorOf(() => loadProfile(path)).field).toBe("extensions.mcp");
  });

  it("a wrong extension text names the profile and extensions.<name>.<field>", () => {
    const path = profileWith((p) => {
      p.extensions.mcp.proxy.snippet = 5;
      delete p.extensions.loadSkill;
    });
    const profile = loadProfile(path);
    expect(userErrorOf(() => extensionTexts(profile, "mcp", mcpTextsSchema)).message).toBe(
      `${path}: field "extensions.mcp.proxy.snippet": expected a string`,
    );
    expect(userErrorOf(() => extensionTexts(profile, "loadSkill", disclosureTextsSchema)).message).toBe(
      `${path}: field "extensions.loadSkill": expected a mapping`,
    );
  });
});
