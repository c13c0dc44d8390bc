import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkExitCode,
  compareWithBaseline,
  findingMessage,
  loadTolerances,
  readBaseline,
} from "../../src/analysis/check/check.js";
import { renderCheckJunit, renderCheckMarkdown } from "../../src/analysis/check/check-render.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { type CheckOptions, runCheck } from "../../src/probes/check-run.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { parseXml } from "../analysis/view/xml-well-formed.js";

/**
 * A copy of a project in a temp folder: one small probe whose profile is a fixture of its own, so
 * the test can make a tool description grow without touching the committed files.
 */
let root: string;
let options: CheckOptions;
const profilePath = () => join(root, "profile.json");

function growReadDescription(extra: string): void {
  const profile = JSON.parse(readFileSync(profilePath(), "utf8"));
  profile.tools.read.description += extra;
  writeFileSync(profilePath(), JSON.stringify(profile, null, 2));
}

/** probes/<name>.yaml in the temp project: the read tool only, no skills, the fixture profile. */
function writeProbe(name: string, rest: string): void {
  const agent = "agent:\n  tools: read\n  noSkills: true\n  profile: ../profile.json\n";
  writeFileSync(join(root, "probes", `${name}.yaml`), `name: ${name}\n${agent}${rest}`);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "pp-check-"));
  mkdirSync(join(root, "probes"));
  copyFileSync(join(PROJECT_ROOT, "profiles", "default.json"), profilePath());
  writeProbe(
    "tiny",
    `model:
  script:
    - call: read
      args: { path: missing.txt }
    - text: DONE
prompts: ["PROBE-TINY. Read missing.txt."]
markers:
  done: { in: messages, match: DONE }
`,
  );
  writeFileSync(join(root, "tolerances.yaml"), "default:\n  tokens: { abs: 2 }\n  bytes: { pct: 0.5 }\n");
  options = {
    probeRoots: [root],
    probes: [],
    baselineDir: join(root, "baselines"),
    tolerancesPath: join(root, "tolerances.yaml"),
    update: false,
    runsDir: join(root, "runs"),
    workspaceRoot: join(root, "ws"),
    database: false,
  };
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("check", () => {
  it("a missing baseline cannot be evaluated (exit 2); --update writes it and the next check passes (exit 0)", async () => {
    const missing = await runCheck(options);
    expect(checkExitCode(missing)).toBe(2);
    expect(missing[0]!.error).toMatch(/no baseline for probe "tiny"/);
    const updated = await runCheck({ ...options, update: true });
    expect(updated.map((c) => c.status)).toEqual(["updated"]);
    expect(JSON.parse(readFileSync(join(root, "baselines", "tiny.json"), "utf8")).requests).toHaveLength(2);
    expect(checkExitCode(await runCheck(options))).toBe(0);
  });

  it("--update of a probe given by a path writes the baseline under the probe's name, inside the baselines folder", async () => {
    // A relative path climbing out of the cwd: joined to the baselines folder it would climb out of that too.
    const climbing = relative(process.cwd(), join(root, "probes", "tiny.yaml"));
    expect(climbing.startsWith("..")).toBe(true);
    const baselineDir = join(root, "path-baselines");
    const [updated] = await runCheck({ ...options, probes: [climbing], baselineDir, update: true });
    expect(updated!.status).toBe("updated");
    expect(readdirSync(baselineDir)).toEqual(["tiny.json"]);
  });

  it("a tool description that grows is a regression naming probe, request, metric, baseline, actual and tolerance", async () => {
    growReadDescription(
      " This sentence was added to the fixture so the read tool's definition grows well past any tolerance.",
    );
    const checks = await runCheck(options);
    expect(checkExitCode(checks)).toBe(1);
    const messages = checks[0]!.regressions.map(findingMessage);
    expect(messages).toContainEqual(
      expect.stringMatching(/^tiny request 1: tokens\.tools is \d+, baseline \d+ \(tolerance ±2\)$/),
    );
    expect(messages).toContainEqual(
      expect.stringMatching(/^tiny request 2: bytes\.tools is \d+, baseline \d+ \(tolerance ±0\.5%\)$/),
    );
    expect(messages.some((m) => m.includes("messages"))).toBe(false);

    const md = renderCheckMarkdown(checks);
    const regressionRows = md
      .split("### Regressions")[1]!
      .split("\n")
      .filter((l) => l.startsWith("| tiny |"));
    expect(regressionRows).toHaveLength(checks[0]!.regressions.length);

    const xml = parseXml(renderCheckJunit(checks));
    expect(xml.name).toBe("testsuites");
    // One <failure> per test case however many findings it has (some report viewers reject a second).
    const cases = xml.children.flatMap((s) => s.children);
    for (const testCase of cases)
      expect(testCase.children.filter((e) => e.name === "failure").length).toBeLessThanOrEqual(1);
    const failures = cases.flatMap((c) => c.children).filter((e) => e.name === "failure");
    expect(failures).toHaveLength(new Set(checks[0]!.regressions.map((f) => f.request)).size);
    expect(failures.length).toBeLessThan(checks[0]!.regressions.length);
    expect(xml.attrs.failures).toBe(String(failures.length));
    // The summary line says what changed in one line, in the terminal and in the job summary.
    expect(checks[0]!.summary).toMatch(/^tiny: \+\d+ tokens per request, \+\$[\d.]+ per run$/);
    expect(md).toContain(`### What changed\n\n- ${checks[0]!.summary}`);
  });

  it("a corrupt baseline is an error in JUnit and markdown; --update then passes", async () => {
    writeFileSync(join(root, "baselines", "tiny.json"), "{ not json");
    const checks = await runCheck(options);
    expect(checkExitCode(checks)).toBe(2);
    const xml = parseXml(renderCheckJunit(checks));
    const errors = xml.children[0]!.children.flatMap((c) => c.children).filter((e) => e.name === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.attrs.message).toContain("tiny.json");
    expect(renderCheckMarkdown(checks)).toMatch(/### Could not evaluate\n\n.*\n.*\n\| tiny \| .*tiny\.json/);
    await runCheck({ ...options, update: true });
    expect(checkExitCode(await runCheck(options))).toBe(0);
  });

  it("a script that runs out while the probe runs is a regression (exit 1), and --update writes no baseline for it", async () => {
    writeProbe("short", `model:\n  script:\n    - text: ONE\nprompts: ["first", "second"]\n`);
    try {
      for (const update of [false, true]) {
        const [short] = await runCheck({ ...options, probes: ["short"], update });
        expect(short!.status).toBe("regression");
        expect(checkExitCode([short!])).toBe(1);
        expect(short!.regressions.map(findingMessage)).toEqual([
          expect.stringMatching(/^short: expect is .*script.*, baseline held \(tolerance exact\)$/),
        ]);
      }
      expect(existsSync(join(root, "baselines", "short.json"))).toBe(false);
    } finally {
      rmSync(join(root, "probes", "short.yaml"));
    }
  });
});

describe("the gate's own limits", () => {
  const baselineFile = () => join(root, "baselines", "tiny.json");
  const tinyRecords = (): RequestRecord[] =>
    readFileSync(join(root, "runs", "tiny", "requests.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as RequestRecord);

  it("a prefix break the baseline did not have fails by default, naming the request, the part and why", async () => {
    await runCheck({ ...options, update: true });
    const records = tinyRecords();
    expect(records[1]!.prefix?.breakAt).toBeNull();
    // What a timestamp in the system prompt does to the second request: the prefix breaks in system.
    const stamped = records.map((r, i) =>
      i === 1 ? { ...r, prefix: { ...r.prefix!, breakAt: "system" as const, breakDetail: "system[0] changed" } } : r,
    );
    const check = compareWithBaseline(readBaseline(baselineFile(), "tiny"), stamped, loadTolerances(""));
    expect(check.regressions.map(findingMessage)).toEqual([
      "tiny request 2: cache prefix is broken in system: system[0] changed, baseline kept (tolerance exact)",
    ]);
    expect(compareWithBaseline(readBaseline(baselineFile(), "tiny"), records, loadTolerances("")).status).toBe("pass");
  });

  it("--update refuses a run over the budget it keeps unless --force; a kept budget then gates, and a pass shows the figures", async () => {
    const before = readFileSync(baselineFile(), "utf8");
    const [refused] = await runCheck({ ...options, update: true, budget: { tokens: 10 } });
    expect(refused!.status).toBe("regression");
    expect(refused!.summary).toMatch(
      /^tiny: --update refused, the run breaks the baseline's own limits: over budget: [\d,]+ prompt tokens, budget 10, [\d,]+ over \(--force writes it anyway\)$/,
    );
    expect(readFileSync(baselineFile(), "utf8")).toBe(before);
    const [forced] = await runCheck({ ...options, update: true, force: true, budget: { tokens: 10 } });
    expect(forced!.status).toBe("updated");
    expect(JSON.parse(readFileSync(baselineFile(), "utf8")).budget).toEqual({ tokens: 10 });
    const [over] = await runCheck(options);
    expect(over!.status).toBe("regression");
    expect(over!.summary!.split("\n")[0]).toMatch(/^tiny: over budget: [\d,]+ prompt tokens, budget 10, [\d,]+ over$/);
    // The budget is kept by a later --update that names none.
    await runCheck({
      ...options,
      update: true,
      force: true,
      budget: { tokens: 100_000 },
      cacheLimits: { minHitRate: 0 },
    });
    const [passed] = await runCheck(options);
    expect(passed!.status).toBe("pass");
    expect(passed!.figures).toMatch(/^[\d,]+ of 100,000 prompt tokens · cache hit rate [\d.]+% \(min 0%\)$/);
    expect(renderCheckMarkdown([passed!])).toContain(`### Against budget\n\n- tiny: ${passed!.figures}`);
  });

  it("a scripted call to a tool the probe does not make active fails the probe, naming the tool and what hid it", async () => {
    writeProbe(
      "hidden",
      `model:\n  script:\n    - call: bash\n      args: { command: ls }\n    - text: DONE\nprompts: ["go"]\n`,
    );
    try {
      const [hidden] = await runCheck({ ...options, probes: ["hidden"], update: true });
      expect(hidden!.status).toBe("regression");
      expect(hidden!.summary).toBe(
        "hidden: expect failed: request 1: model.script calls bash, which is not active: agent.tools [read] leaves it out",
      );
      expect(existsSync(join(root, "baselines", "hidden.json"))).toBe(false);
    } finally {
      rmSync(join(root, "probes", "hidden.yaml"));
    }
  });
});

describe("parseXml (the test's own well-formedness check)", () => {
  it("rejects what is not well-formed", () => {
    expect(() => parseXml("<a><b></a></b>")).toThrow(/closes/);
    expect(() => parseXml('<a x="1 & 2"/>')).toThrow(/entity/);
    expect(() => parseXml("<a></a><b/>")).toThrow(/second root/);
    expect(parseXml('<a x="&amp;"><b/></a>').children[0]!.name).toBe("b");
  });
});
