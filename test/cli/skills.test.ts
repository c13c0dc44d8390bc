/**
 * `payload-probe skills list` on real temp trees. The built CLI runs as a child for one list of each
 * output (JSON, the table: the smoke tests) and for its usage errors and help; the other lists run in
 * this process (test/fixtures/cli-in-process.ts), HOME set the same way.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { runInProcess } from "../fixtures/cli-in-process.js";
import { link, makeTempDir, skillMd, writeTree } from "../skills/tree.js";

const CLI = join(PROJECT_ROOT, "dist/cli/main.js");

let tmp: ReturnType<typeof makeTempDir>;
let cwd: string;
let agentDir: string;
beforeEach(() => {
  tmp = makeTempDir();
  cwd = join(tmp.dir, "repo");
  agentDir = join(tmp.dir, "agent");
  writeTree(tmp.dir, {
    "repo/.git/": "",
    "repo/.pi/skills/project-skill/SKILL.md": skillMd({ description: "from the project" }),
    "agent/skills/user-skill/SKILL.md": skillMd({ description: "from the agent dir" }),
    "agent/skills/hidden/SKILL.md": skillMd({ description: "hidden one", extra: "disable-model-invocation: true" }),
    "agent/skills/broken/SKILL.md": skillMd({ name: "broken" }),
    "extra/user-skill/SKILL.md": skillMd({ description: "loses to the agent dir" }),
  });
  link(join(agentDir, "skills/user-skill"), join(agentDir, "skills/zz-link"));
});
afterEach(() => tmp.cleanup());

function skills(...args: string[]) {
  const run = spawnSync(process.execPath, [CLI, "skills", ...args, "--cwd", cwd, "--agent-dir", agentDir], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, HOME: join(tmp.dir, "home") },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** `skills` in this process, with the same arguments and HOME. */
async function skillsInProcess(...args: string[]) {
  const env = { HOME: join(tmp.dir, "home") };
  const { status, stdout, stderr } = await runInProcess(env, "skills", ...args, "--cwd", cwd, "--agent-dir", agentDir);
  return { code: status, stdout, stderr };
}

describe("payload-probe skills list", () => {
  it("--json: roots in load order, loaded skills, every diagnostic (collision with winner and loser)", () => {
    const { code, stdout } = skills("list", join(tmp.dir, "extra"), "--json");
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as {
      roots: { scope: string }[];
      skills: { name: string; disableModelInvocation: boolean }[];
      diagnostics: { type: string; message: string; collision?: unknown }[];
    };
    expect(out.roots.map((r) => r.scope)).toEqual(["user", "user", "cli"]);
    expect(out.skills.map((s) => [s.name, s.disableModelInvocation])).toEqual([
      ["hidden", true],
      ["user-skill", false],
    ]);
    expect(out.diagnostics).toEqual([
      { type: "warning", message: "description is required", path: join(agentDir, "skills/broken/SKILL.md") },
      {
        type: "collision",
        message: 'name "user-skill" collision',
        path: join(tmp.dir, "extra/user-skill/SKILL.md"),
        collision: {
          resourceType: "skill",
          name: "user-skill",
          winnerPath: join(agentDir, "skills/user-skill/SKILL.md"),
          loserPath: join(tmp.dir, "extra/user-skill/SKILL.md"),
        },
      },
    ]);
  });

  it("--trusted adds the project root; --no-skills keeps only the given paths", async () => {
    const trusted = JSON.parse((await skillsInProcess("list", "--trusted", "--json")).stdout) as {
      skills: { name: string }[];
    };
    expect(trusted.skills.map((s) => s.name)).toEqual(["project-skill", "hidden", "user-skill"]);
    const none = JSON.parse(
      (await skillsInProcess("list", "--no-skills", join(tmp.dir, "extra"), "--json")).stdout,
    ) as {
      skills: { name: string }[];
    };
    expect(none.skills.map((s) => s.name)).toEqual(["user-skill"]);
  });

  it("tables: skills with where they come from; diagnostics counted, listed with --diagnostics", async () => {
    const plain = skills("list");
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain("Skills (2):");
    expect(plain.stdout).toMatch(/│ hidden +│ user +│ no \(disable-model-invocation\) │/);
    expect(plain.stdout).toContain("1 diagnostic; run with --diagnostics to list them.");
    const listed = await skillsInProcess("list", "--diagnostics");
    expect(listed.stdout).toMatch(/│ warning │ description is required │ .*broken\/SKILL\.md/);
  });

  it("bad usage exits 2 with a message and no stack", () => {
    const bad = skills("show");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /^payload-probe: skills: expected the subcommand "list", got "show"\. See '.+ skills --help'\.\n$/,
    );
    expect(skills("list", "--bogus").code).toBe(2);
    expect(skills("--help").stdout).toContain("Usage: payload-probe skills list");
  });
});
