/**
 * A folder stored under another name (a probe's per-checkout workspace root stored as the root every
 * checkout shares): every path under it, as written and as a JSON string writes it, and nothing else.
 */
import { describe, expect, it } from "vitest";
import { aliasPaths } from "../../src/capture/path-alias.js";

describe("aliasPaths", () => {
  const alias = aliasPaths({ path: "/tmp/payload-48213", storedAs: "/tmp/payload-probe" });

  it("renames every path under the folder, in prose and in a JSON body", () => {
    const body = JSON.stringify({
      system: "cwd: /tmp/payload-48213/p1/cwd\n<location>/tmp/payload-48213/p1/agent</location>",
    });
    expect(JSON.parse(alias(body))).toEqual({
      system: "cwd: /tmp/payload-probe/p1/cwd\n<location>/tmp/payload-probe/p1/agent</location>",
    });
  });

  it("leaves a longer folder name that starts the same, and the folder's name alone, as they are", () => {
    const text = "/tmp/payload-482130/p1 and /tmp/payload-48213 end";
    expect(alias(text)).toBe(text);
  });

  it("renames a Windows path in a JSON string, whose backslashes are doubled", () => {
    const windows = aliasPaths({ path: "C:\\Temp\\payload-48213", storedAs: "/tmp/payload-probe" });
    const body = JSON.stringify({ cwd: "C:\\Temp\\payload-48213\\p1\\cwd" });
    expect(JSON.parse(windows(body))).toEqual({ cwd: "/tmp/payload-probe\\p1\\cwd" });
  });

  it("is the identity without an alias", () => {
    expect(aliasPaths(undefined)("/tmp/payload-48213/p1")).toBe("/tmp/payload-48213/p1");
  });
});
