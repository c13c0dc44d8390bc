import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkLayers, formatCycle, formatViolation, type LayerRule } from "./layers-rules.js";

const RULES: LayerRule[] = [
  { folder: "providers/", mayImport: [] },
  { folder: "runtime/", mayImport: ["providers/types.ts"] },
  { folder: "skills/", mayImport: [] },
  { folder: "skills/disclosure/", mayImport: ["skills/", "runtime/types.ts"] },
  { folder: "cli/", mayImport: ["runtime/", "skills/", "providers/"] },
  { folder: "text/", mayImport: [], neutral: true },
  { folder: "files/", mayImport: ["text/"], neutral: true },
];

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

/** A small src/ tree in a temp folder: path → file text. */
function tree(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "layers-check-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const clean = {
  "errors.ts": "export class UserError extends Error {}\n",
  "providers/types.ts": "export interface Message { role: string }\n",
  "providers/codec.ts": 'import type { Message } from "./types.js";\nexport const m: Message[] = [];\n',
  "runtime/types.ts": 'import type { Message } from "../providers/types.js";\nexport type Tool = { m: Message };\n',
  "runtime/agent.ts":
    'import { UserError } from "../errors.js";\nimport type { Tool } from "./types.js";\nexport const t: Tool[] = [];\nexport { UserError };\n',
  "skills/discover.ts": "export const found: string[] = [];\n",
  "skills/disclosure/tool.ts":
    'import { found } from "../discover.js";\nimport type { Tool } from "../../runtime/types.js";\nexport const tools: Tool[] = []; void found;\n',
};

describe("the layer check on a fixture tree", () => {
  it("finds nothing in a tree that keeps its rules", () => {
    const { violations, cycles } = checkLayers(tree(clean), RULES);
    expect({ violations, cycles }).toEqual({ violations: [], cycles: [] });
  });

  it("names file, line, import and rule for a forbidden static import", () => {
    const report = checkLayers(
      tree({ ...clean, "providers/codec.ts": 'import { t } from "../runtime/agent.js";\nexport const x = t;\n' }),
      RULES,
    );
    expect(report.violations.map(formatViolation)).toEqual([
      'providers/codec.ts:1 imports "../runtime/agent.js" (runtime/agent.ts): providers/ may import neutral modules only',
    ]);
  });

  it("counts type-only, re-exported and dynamic imports, and allows only the named module of a folder", () => {
    const report = checkLayers(
      tree({
        ...clean,
        "runtime/tools/process.ts": "export const run = 1;\n",
        "skills/disclosure/tool.ts": [
          'import type { Tool } from "../../runtime/types.js";',
          'export { run } from "../../runtime/tools/process.js";',
          'export const load = () => import("../../runtime/agent.js");',
          'export type T = import("../../providers/codec.js").X | Tool;',
        ].join("\n"),
      }),
      RULES,
    );
    const rule = "skills/disclosure/ may import skills/, runtime/types.ts and neutral modules";
    expect(report.violations.map(formatViolation)).toEqual([
      `skills/disclosure/tool.ts:2 imports "../../runtime/tools/process.js" (runtime/tools/process.ts): ${rule}`,
      `skills/disclosure/tool.ts:3 imports "../../runtime/agent.js" (runtime/agent.ts): ${rule}`,
      `skills/disclosure/tool.ts:4 imports "../../providers/codec.js" (providers/codec.ts): ${rule}`,
    ]);
  });

  it("holds a nested layer to its own rule: skills/ may not import skills/disclosure/", () => {
    const report = checkLayers(
      tree({
        ...clean,
        "skills/discover.ts": 'import { tools } from "./disclosure/tool.js";\nexport const found = tools;\n',
      }),
      RULES,
    );
    expect(report.violations.map(formatViolation)).toEqual([
      'skills/discover.ts:1 imports "./disclosure/tool.js" (skills/disclosure/tool.ts): skills/ may import neutral modules only',
    ]);
    // discover → disclosure/tool → discover is also a cycle, named from its first module by name.
    expect(report.cycles.map(formatCycle)).toEqual([
      "import cycle: skills/disclosure/tool.ts → skills/discover.ts → skills/disclosure/tool.ts",
    ]);
  });

  it("reports a cycle inside one layer, even through type-only imports", () => {
    const report = checkLayers(
      tree({
        ...clean,
        "providers/a.ts": 'import type { B } from "./b.js";\nexport type A = { b?: B };\n',
        "providers/b.ts": 'import type { C } from "./c.js";\nexport type B = { c?: C };\n',
        "providers/c.ts": 'import type { A } from "./a.js";\nexport type C = { a?: A };\n',
      }),
      RULES,
    );
    expect(report.violations).toEqual([]);
    expect(report.cycles.map(formatCycle)).toEqual([
      "import cycle: providers/a.ts → providers/b.ts → providers/c.ts → providers/a.ts",
    ]);
  });

  it("the CLI only dispatches: a command that cli/main.ts loads is imported by no other module", () => {
    const report = checkLayers(
      tree({
        ...clean,
        // A helper main.ts loads too (the help printer) is no command: it exports no `main`.
        "cli/help-text.ts": "export const printHelp = (text: string) => text;\n",
        "cli/args.ts":
          'import { printHelp } from "./help-text.js";\nexport const parse = (argv: string[]) => argv.map(printHelp);\n',
        "cli/main.ts":
          'import { printHelp } from "./help-text.js";\nexport const commands = { run: () => import("./run.js"), check: () => import("./check.js") };\nvoid printHelp;\n',
        "cli/run.ts":
          'import { parse } from "./args.js";\nexport const allNames = () => parse([]);\nexport async function main() { return allNames().length; }\n',
        "cli/check.ts":
          'import { parse } from "./args.js";\nimport { allNames } from "./run.js";\nexport const main = () => [parse, allNames];\n',
      }),
      RULES,
    );
    expect(report.violations.map(formatViolation)).toEqual([
      'cli/check.ts:2 imports "./run.js" (cli/run.ts): cli/run.ts is a command that only cli/main.ts loads; move what is shared out of it',
    ]);
  });

  it("keeps neutral modules neutral, and asks for a rule for a folder the table does not know", () => {
    const report = checkLayers(
      tree({
        ...clean,
        "errors.ts": 'import type { Message } from "./providers/types.js";\nexport type E = Message;\n',
        "viewer/page.ts": 'import { UserError } from "../errors.js";\nexport { UserError };\n',
        "runtime/broken.ts": 'import { gone } from "./missing.js";\nexport { gone };\n',
      }),
      RULES,
    );
    expect(report.violations.map(formatViolation)).toEqual([
      'errors.ts:1 imports "./providers/types.js" (providers/types.ts): neutral modules (files directly under src/) may import only other neutral modules',
      'runtime/broken.ts:1 imports "./missing.js": a relative import must name a module under src/',
      'viewer/page.ts:1 imports "../errors.js" (errors.ts): viewer/ has no rule in the layer table: add one',
    ]);
  });

  it("lets every layer import a neutral folder, and holds a neutral folder to its own short list", () => {
    const report = checkLayers(
      tree({
        ...clean,
        "text/wrap.ts":
          'import { UserError } from "../errors.js";\nexport const wrap = (s: string) => [s, UserError];\n',
        "text/bad.ts":
          'import { found } from "../skills/discover.js";\nimport { lines } from "../files/lines.js";\nexport const bad = [found, lines];\n',
        "files/lines.ts": 'import { wrap } from "../text/wrap.js";\nexport const lines = wrap("");\n',
        "providers/render.ts":
          'import { wrap } from "../text/wrap.js";\nimport { lines } from "../files/lines.js";\nexport const r = [wrap, lines];\n',
        "errors.ts": 'import { wrap } from "./text/wrap.js";\nexport class UserError extends Error {}\nvoid wrap;\n',
      }),
      RULES,
    );
    expect(report.violations.map(formatViolation)).toEqual([
      'errors.ts:1 imports "./text/wrap.js" (text/wrap.ts): neutral modules (files directly under src/) may import only other neutral modules',
      'text/bad.ts:1 imports "../skills/discover.js" (skills/discover.ts): text/ is neutral: it may import only its own folder and files directly under src/',
      'text/bad.ts:2 imports "../files/lines.js" (files/lines.ts): text/ is neutral: it may import only its own folder and files directly under src/',
    ]);
  });
});
