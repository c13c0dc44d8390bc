/**
 * show, report --segments and view count each segment as the capture counted it, from the token
 * cache: a run captured on this machine needs no tokenizer for them (half a second and 50 MB less).
 * The built CLI against a token cache folder of the test's own: cold, the tokenizer answers and the
 * folder learns; warm, the same figures come from the folder alone (nothing new is written); and
 * facts altered in its files change the figures, so they do come from it. `show` runs as a child each
 * time, so the folder is read by processes that did not write it; report and view run in this process
 * (test/fixtures/cli-in-process.ts), which reads the folder afresh for every command as a child does.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TOKEN_CACHE_ENV } from "../../src/capture/token-count-cache.js";
import { MAIN } from "../cli/scratch-cli.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { copySharedRuns } from "../fixtures/shared-runs.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

/** Each file of the cache folder with its text. */
const factFiles = (folder: string) =>
  Object.fromEntries(readdirSync(folder).map((name) => [name, readFileSync(join(folder, name), "utf8")]));

/** The commands, by the name of their test; only `show` runs as a child. */
const COMMANDS: Record<string, (runs: string, scratch: string) => string[]> = {
  show: (runs) => ["show", "p1", "4", "--runs", runs],
  "report --segments": (runs) => ["report", "p1", "--segments", "--json", "--runs", runs],
  view: (runs, scratch) => ["view", "p1", "--runs", runs, "--out", join(scratch, "p1.html")],
};

describe("segment figures come from the token cache", () => {
  for (const [name, args] of Object.entries(COMMANDS)) {
    it(`${name}: the same figures cold and warm, the warm run from the folder alone`, async () => {
      const scratch = tempDir("ledger-cache-");
      const runs = join(scratch, "runs");
      await copySharedRuns(["p1"], runs);
      const facts = join(scratch, "tokens");
      const env = { [TOKEN_CACHE_ENV]: facts };
      const run = async () => {
        if (name !== "show") return runInProcess(env, ...args(runs, scratch));
        return spawnSync(process.execPath, [MAIN, ...args(runs, scratch)], {
          cwd: scratch,
          env: { ...process.env, ...env },
          encoding: "utf8",
          timeout: 120_000,
        });
      };
      const output = async () => {
        const result = await run();
        expect(result.stderr).toBe("");
        expect(result.status).toBe(0);
        return name === "view" ? readFileSync(join(scratch, "p1.html"), "utf8") : result.stdout;
      };
      const cold = await output();
      const learned = factFiles(facts);
      expect(Object.values(learned).join("").split("\n").length).toBeGreaterThan(5);
      expect(await output()).toBe(cold);
      expect(factFiles(facts)).toEqual(learned);
      for (const [name, text] of Object.entries(learned)) {
        writeFileSync(
          join(facts, name),
          text.replace(/"n":(\d+)/g, (_, n) => `"n":${Number(n) + 1000}`),
        );
      }
      expect(await output()).not.toBe(cold);
    });
  }
});
