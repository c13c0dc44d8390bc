import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type DiscoverSkillsOptions, discoverSkills } from "../../src/skills/discover.js";
import { link, makeTempDir, skillMd, writeTree } from "./tree.js";

let tmp: ReturnType<typeof makeTempDir>;
let home: string;
let agentDir: string;
let repo: string;
let cwd: string;

beforeEach(() => {
  tmp = makeTempDir();
  home = join(tmp.dir, "home");
  agentDir = join(home, ".pi/agent");
  repo = join(tmp.dir, "work/repo");
  cwd = join(repo, "packages/app");
  writeTree(tmp.dir, {
    "work/.agents/skills/above-git/SKILL.md": skillMd({ description: "above the git root" }),
    "work/repo/.git/": "",
    "work/repo/.agents/skills/at-root/SKILL.md": skillMd({ description: "at the git root" }),
    "work/repo/packages/.agents/skills/between/SKILL.md": skillMd({ description: "between cwd and git root" }),
    "work/repo/packages/app/.agents/skills/in-cwd/SKILL.md": skillMd({ description: "in cwd" }),
    "work/repo/packages/app/src/.agents/skills/below-cwd/SKILL.md": skillMd({ description: "below cwd" }),
    "work/repo/packages/app/.pi/skills/pi-project/SKILL.md": skillMd({ description: "project pi root" }),
    "home/.pi/agent/skills/user-pi/SKILL.md": skillMd({ description: "user pi root" }),
    "home/.agents/skills/user-agents/SKILL.md": skillMd({ description: "user agents root" }),
    "extra/cli-skill/SKILL.md": skillMd({ description: "from --skill" }),
  });
});
afterEach(() => tmp.cleanup());

function discover(extra: Partial<DiscoverSkillsOptions> = {}) {
  return discoverSkills({ cwd, agentDir, home, ...extra });
}

const names = (result: ReturnType<typeof discover>) => result.skills.map((skill) => skill.name);

describe("discoverSkills: sources and order", () => {
  it("loads project roots, then user roots, then --skill paths", () => {
    const result = discover({ trusted: true, skillPaths: [join(tmp.dir, "extra/cli-skill")] });
    expect(names(result)).toEqual([
      "pi-project",
      "in-cwd",
      "between",
      "at-root",
      "user-pi",
      "user-agents",
      "cli-skill",
    ]);
    expect(result.skills.map((skill) => skill.source)).toEqual([
      { scope: "project", mode: "pi", root: join(cwd, ".pi/skills") },
      { scope: "project", mode: "agents", root: join(cwd, ".agents/skills") },
      { scope: "project", mode: "agents", root: join(repo, "packages/.agents/skills") },
      { scope: "project", mode: "agents", root: join(repo, ".agents/skills") },
      { scope: "user", mode: "pi", root: join(agentDir, "skills") },
      { scope: "user", mode: "agents", root: join(home, ".agents/skills") },
      { scope: "cli", mode: "pi", root: join(tmp.dir, "extra/cli-skill") },
    ]);
    expect(result.diagnostics).toEqual([]);
  });

  it("skips the project roots when the project is not trusted (the default)", () => {
    expect(names(discover())).toEqual(["user-pi", "user-agents"]);
    expect(names(discover({ trusted: false }))).toEqual(["user-pi", "user-agents"]);
  });

  it("stops the .agents/skills walk at an explicit git root", () => {
    expect(names(discover({ trusted: true, gitRoot: join(tmp.dir, "work") }))).toEqual([
      "pi-project",
      "in-cwd",
      "between",
      "at-root",
      "above-git",
      "user-pi",
      "user-agents",
    ]);
    expect(names(discover({ trusted: true, gitRoot: cwd }))).toEqual([
      "pi-project",
      "in-cwd",
      "user-pi",
      "user-agents",
    ]);
  });

  it("walks up to the filesystem root outside a git repo", () => {
    writeTree(tmp.dir, {
      "plain/.agents/skills/far-up/SKILL.md": skillMd({ description: "two levels above cwd" }),
      "plain/a/b/": "",
    });
    const result = discoverSkills({ cwd: join(tmp.dir, "plain/a/b"), agentDir, home, trusted: true });
    expect(names(result)).toEqual(["far-up", "user-pi", "user-agents"]);
  });

  it("treats the home .agents/skills as a user root even when the walk passes through home", () => {
    writeTree(home, { "project/": "" });
    const untrusted = discoverSkills({ cwd: join(home, "project"), agentDir, home });
    expect(names(untrusted)).toEqual(["user-pi", "user-agents"]);
    const trusted = discoverSkills({ cwd: join(home, "project"), agentDir, home, trusted: true });
    expect(trusted.skills.map((skill) => [skill.name, skill.source.scope])).toEqual([
      ["user-pi", "user"],
      ["user-agents", "user"],
    ]);
  });

  it("drops every discovered root for noSkills but still loads explicit --skill paths", () => {
    expect(names(discover({ trusted: true, noSkills: true }))).toEqual([]);
    const result = discover({ trusted: true, noSkills: true, skillPaths: [join(tmp.dir, "extra/cli-skill/SKILL.md")] });
    expect(names(result)).toEqual(["cli-skill"]);
    expect(result.skills[0]?.filePath).toBe(join(tmp.dir, "extra/cli-skill/SKILL.md"));
  });

  it("names a loose root file of <agentDir>/skills after that folder", () => {
    writeTree(agentDir, { "skills/loose.md": skillMd({ description: "a loose root file" }) });
    expect(names(discover())).toEqual(["skills", "user-pi", "user-agents"]);
  });

  it("ignores loose root files of .agents/skills roots", () => {
    writeTree(home, { ".agents/skills/loose.md": skillMd({ name: "loose", description: "root file" }) });
    expect(names(discover())).toEqual(["user-pi", "user-agents"]);
  });
});

describe("discoverSkills: --skill paths", () => {
  it("resolves relative paths against cwd and ~ against home", () => {
    writeTree(cwd, { "local/here.md": skillMd({ name: "here", description: "relative to cwd" }) });
    writeTree(home, { "mine/SKILL.md": skillMd({ description: "under home" }) });
    const result = discover({ noSkills: true, skillPaths: ["local/here.md", "~/mine"] });
    expect(result.skills.map((skill) => skill.filePath)).toEqual([
      join(cwd, "local/here.md"),
      join(home, "mine/SKILL.md"),
    ]);
  });

  it("scans a --skill directory like a pi root: loose .md files only at its top", () => {
    writeTree(tmp.dir, {
      "bundle/top.md": skillMd({ name: "top", description: "top-level file" }),
      "bundle/sub/deep.md": skillMd({ name: "deep", description: "not at the top" }),
      "bundle/sub/real/SKILL.md": skillMd({ description: "a nested skill root" }),
    });
    expect(names(discover({ noSkills: true, skillPaths: [join(tmp.dir, "bundle")] }))).toEqual(["real", "top"]);
  });

  it("warns about a path that does not exist or is not markdown", () => {
    writeTree(tmp.dir, { "notes.txt": "plain text" });
    const missing = join(tmp.dir, "nope");
    const text = join(tmp.dir, "notes.txt");
    const result = discover({ noSkills: true, skillPaths: [missing, text] });
    expect(result.skills).toEqual([]);
    expect(result.diagnostics).toEqual([
      { type: "warning", message: "skill path does not exist", path: missing },
      { type: "warning", message: "skill path is not a markdown file", path: text },
    ]);
  });
});

describe("discoverSkills: duplicates", () => {
  it("keeps the first of two skills with one name and reports the collision exactly", () => {
    const projectFile = join(cwd, ".pi/skills/dup-a/SKILL.md");
    const userFile = join(agentDir, "skills/dup-b/SKILL.md");
    writeTree(tmp.dir, {
      [projectFile.slice(tmp.dir.length + 1)]: skillMd({ name: "shared", description: "project copy" }),
      [userFile.slice(tmp.dir.length + 1)]: skillMd({ name: "shared", description: "user copy" }),
    });
    const result = discover({ trusted: true, gitRoot: cwd });
    expect(result.skills.filter((skill) => skill.name === "shared").map((skill) => skill.description)).toEqual([
      "project copy",
    ]);
    expect(result.diagnostics).toEqual([
      {
        type: "collision",
        message: 'name "shared" collision',
        path: userFile,
        collision: { resourceType: "skill", name: "shared", winnerPath: projectFile, loserPath: userFile },
      },
    ]);
  });

  it("makes a --skill path lose a collision with a discovered skill", () => {
    const cliFile = join(tmp.dir, "extra/again/SKILL.md");
    writeTree(tmp.dir, { "extra/again/SKILL.md": skillMd({ name: "user-pi", description: "cli copy" }) });
    const result = discover({ skillPaths: [cliFile] });
    expect(result.skills.find((skill) => skill.name === "user-pi")?.description).toBe("user pi root");
    expect(result.diagnostics).toEqual([
      {
        type: "collision",
        message: 'name "user-pi" collision',
        path: cliFile,
        collision: {
          resourceType: "skill",
          name: "user-pi",
          winnerPath: join(agentDir, "skills/user-pi/SKILL.md"),
          loserPath: cliFile,
        },
      },
    ]);
  });

  it("loads a file reached twice through a symlink once, silently", () => {
    link(join(cwd, ".pi/skills/pi-project"), join(agentDir, "skills/alias"));
    const trusted = discover({ trusted: true, gitRoot: cwd });
    expect(names(trusted)).toEqual(["pi-project", "in-cwd", "user-pi", "user-agents"]);
    expect(trusted.diagnostics).toEqual([]);
    // Untrusted, the project copy is never scanned, so the user root's link is what loads.
    const untrusted = discover({ gitRoot: cwd });
    expect(untrusted.skills.map((skill) => skill.filePath)).toEqual([
      join(agentDir, "skills/alias/SKILL.md"),
      join(agentDir, "skills/user-pi/SKILL.md"),
      join(home, ".agents/skills/user-agents/SKILL.md"),
    ]);
  });

  it("loads an explicit --skill path that repeats a discovered file once, silently", () => {
    const result = discover({ skillPaths: [join(agentDir, "skills/user-pi/SKILL.md")] });
    expect(names(result)).toEqual(["user-pi", "user-agents"]);
    expect(result.diagnostics).toEqual([]);
  });
});

describe("discoverSkills: one bad file never stops the others", () => {
  it("reports broken and incomplete files and loads the rest", () => {
    const broken = join(agentDir, "skills/a-broken/SKILL.md");
    const noDescription = join(agentDir, "skills/b-no-description/SKILL.md");
    writeTree(agentDir, {
      "skills/a-broken/SKILL.md": "---\ndescription: [unclosed\n---\nBody",
      "skills/b-no-description/SKILL.md": skillMd({ name: "b-no-description" }),
      "skills/c-fine/SKILL.md": skillMd({ description: "fine" }),
    });
    const result = discover();
    expect(names(result)).toEqual(["c-fine", "user-pi", "user-agents"]);
    expect(result.diagnostics).toEqual([
      { type: "error", message: expect.stringMatching(/^invalid frontmatter: /), path: broken },
      { type: "warning", message: "description is required", path: noDescription },
    ]);
  });

  it("keeps skills under a git-ignored folder out", () => {
    writeTree(agentDir, { "skills/.gitignore": "wip/\n", "skills/wip/SKILL.md": skillMd({ description: "ignored" }) });
    expect(names(discover())).toEqual(["user-pi", "user-agents"]);
  });
});
