/**
 * `payload-probe view`. The built CLI runs as a child for the page written by default (the smoke test)
 * and for a run it cannot find (exit 2 without a stack); --diff, --out and --open run in this process
 * (test/fixtures/cli-in-process.ts), PATH set the same way for --open.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../../src/project-root.js";
import { cliInProcess } from "../../fixtures/cli-in-process.js";
import { untilInFolder } from "../../fixtures/watch-until.js";
import { runProbesInto } from "./view-runs.js";

function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawnSync(process.execPath, [join(PROJECT_ROOT, "dist/cli/main.js"), ...args], {
    encoding: "utf8",
    timeout: 120_000,
    env,
  });
  return { code: child.status, out: child.stdout, err: child.stderr };
}

let base: string;
let runs: string;
beforeAll(async () => {
  ({ base, runs } = await runProbesInto(["p7"]));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe("payload-probe view on the command line", () => {
  it("writes runs/<run>/view.html by default: inline script and style only, a CSP that forbids any load", () => {
    const { code, out } = cli(["view", "p7", "--runs", runs]);
    expect(code).toBe(0);
    const page = join(runs, "p7", "view.html");
    expect(out.trim()).toMatch(new RegExp(`^${page} \\(\\d+\\.\\d KiB\\)$`));
    const html = readFileSync(page, "utf8");
    expect(html).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'sha256-/);
    expect(html).not.toMatch(/<(script|img|iframe)[^>]+src=|<link /i);
    expect(existsSync(`${page}.partial`)).toBe(false);
  });

  it("--diff writes view-diff-<other>.html beside run A, --out anywhere", async () => {
    const other = join(base, "copy");
    mkdirSync(other);
    for (const f of ["requests.jsonl", "payloads.jsonl"])
      writeFileSync(join(other, f), readFileSync(join(runs, "p7", f)));
    expect((await cliInProcess({}, "view", "p7", "--diff", other, "--runs", runs)).code).toBe(0);
    expect(existsSync(join(runs, "p7", "view-diff-copy.html"))).toBe(true);
    const out = join(base, "elsewhere", "page.html");
    mkdirSync(dirname(out));
    expect((await cliInProcess({}, "view", "p7", "--out", out, "--runs", runs)).code).toBe(0);
    expect(existsSync(out)).toBe(true);
  });

  it("--open hands the page to xdg-open when there is one, else prints the path to open", async () => {
    const bin = join(base, "bin");
    mkdirSync(bin);
    const opened = join(base, "opened.txt");
    // Written whole (a rename), so that the file appearing is the event to wait for.
    writeFileSync(
      join(bin, "xdg-open"),
      `#!/bin/sh\nprintf '%s' "$1" > ${opened}.part && mv ${opened}.part ${opened}\n`,
    );
    chmodSync(join(bin, "xdg-open"), 0o755);
    const page = join(base, "open.html");
    const opening = ["view", "p7", "--out", page, "--open", "--runs", runs];
    const withOpener = await cliInProcess({ PATH: `${bin}:/usr/bin:/bin` }, ...opening);
    expect(withOpener.code).toBe(0);
    // The CLI leaves the opener running on its own (detached), as a desktop's would.
    await untilInFolder(base, () => existsSync(opened));
    expect(readFileSync(opened, "utf8")).toBe(page);
    const without = await cliInProcess({ PATH: "/nonexistent" }, ...opening);
    expect(without.code).toBe(0);
    expect(without.out).toContain(`no xdg-open here: open ${page} in a browser`);
  });

  it("a run that cannot be found exits 2 without a stack", () => {
    const { code, err } = cli(["view", "no-such-run", "--runs", runs]);
    expect(code).toBe(2);
    expect(err).toMatch(/^payload-probe: no run "no-such-run"/);
    expect(err).not.toMatch(/\n\s+at /);
  });
});
