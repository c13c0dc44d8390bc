/**
 * The layer table of docs/architecture.md as data, and the import walk that holds `src/` to it. The test in
 * layers.test.ts runs it on the real tree; layers-check.test.ts runs it on small trees written to a
 * temp folder, so a broken walk cannot pass silently. Where a rule here is stricter or wider than
 * docs/architecture.md's table, docs/decisions.md ("Layers") says why: this file is the rule.
 */

import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type * as TypeScript from "typescript";
import { ts } from "./fixtures/typescript.js";

/** One layer: the folder it owns (relative to `src/`, ending in `/`) and the modules it may import. */
export interface LayerRule {
  folder: string;
  /** Folders (`providers/`) or single modules (`runtime/types.ts`) this layer may import. */
  mayImport: string[];
  /** Why, when the rule differs from docs/architecture.md's table. */
  why?: string;
  /**
   * A subject folder of neutral modules (`text/`, `files/`, `processes/`): every layer may import it,
   * and it imports only the files directly under `src/`, its own folder and its `mayImport`.
   */
  neutral?: true;
}

/**
 * Every layer may import its own folder and the neutral modules: the files directly under `src/` and
 * the subject folders marked `neutral`.
 */
export const LAYER_RULES: LayerRule[] = [
  { folder: "text/", mayImport: [], neutral: true },
  { folder: "files/", mayImport: [], neutral: true },
  {
    folder: "processes/",
    mayImport: ["files/"],
    neutral: true,
    why: "a pid lock is a file (its failures are storage errors) and the bundle loader writes its code cache whole; files/ needs nothing of processes/",
  },
  {
    folder: "runtime/",
    mayImport: ["providers/types.ts"],
    why: "the probes layer hands the skills block and hooks to the runtime, so runtime needs no skills/ import; allowing one would let runtime/ and skills/disclosure/ import each other",
  },
  { folder: "skills/", mayImport: [] },
  {
    folder: "skills/disclosure/",
    mayImport: ["skills/", "runtime/types.ts", "providers/types.ts"],
    why: "the load_skill model is a runtime extension, as mcp/ is: it reaches the runtime through the extension API only",
  },
  {
    folder: "mcp/",
    mayImport: ["runtime/types.ts", "providers/types.ts"],
    why: "the extension API (runtime/types.ts) speaks in provider types (JsonSchema), so those come with it",
  },
  { folder: "providers/", mayImport: [] },
  {
    folder: "capture/",
    mayImport: ["providers/"],
    why: "the mock provider serves the scripted model, which lives with the other transports in providers/",
  },
  {
    folder: "analysis/",
    mayImport: ["capture/", "providers/"],
    why: "the segment ledger decodes stored wire bodies with the same codecs capture uses; its feature folders (check/, cost/, diff/, show/, table/, view/, otel/) are this one layer and have no rule of their own, so each has exactly these rights",
  },
  {
    folder: "analysis/view/browser/",
    mayImport: ["analysis/view/types.ts"],
    why: "the view page's script runs in a browser: it shares the types of the page's data with the code that writes them, and takes nothing else of the server side",
  },
  {
    folder: "probes/",
    mayImport: [
      "runtime/",
      "skills/",
      "mcp/",
      "providers/",
      "capture/",
      "analysis/",
      "agents/",
      "stub-mcp/wire-log.ts",
    ],
    why: "a probe's expect block reads the wire log its stub servers wrote, in the format stub-mcp/wire-log.ts owns",
  },
  {
    folder: "profile-import/",
    mayImport: ["analysis/", "capture/", "providers/", "runtime/", "skills/", "mcp/"],
    why: "importing a profile reads runs as analysis does and hands the texts back in the runtime's, the skills block's and the MCP adapter's own formats, whose owners parse them",
  },
  {
    folder: "cli/",
    mayImport: [
      "runtime/",
      "skills/",
      "mcp/",
      "providers/",
      "capture/",
      "analysis/",
      "probes/",
      "stub-mcp/",
      "profile-import/",
      "agents/",
    ],
  },
  { folder: "stub-mcp/", mayImport: [] },
  { folder: "agents/", mayImport: [] },
];

export interface ImportEdge {
  /** Importing module, relative to the source root (`capture/mock-server.ts`). */
  from: string;
  line: number;
  /** The specifier as written (`../probes/types.js`). */
  specifier: string;
  /** The imported module relative to the source root, or undefined when it does not resolve. */
  to: string | undefined;
}

export interface LayerViolation extends ImportEdge {
  /** The rule the import breaks, in words. */
  rule: string;
}

export interface LayerReport {
  /** Every import the walk found, what the report was made from. */
  edges: ImportEdge[];
  violations: LayerViolation[];
  /** Each import cycle as the modules along it, the first repeated at the end. */
  cycles: string[][];
}

function sourceFiles(root: string, dir = root): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...sourceFiles(root, path));
    else if (/\.(ts|mts|tsx)$/.test(name) && !name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

const toPosix = (path: string): string => path.split(sep).join("/");

/** Every module specifier in a file: static imports and re-exports, `import("…")` calls and types, `import x = require("…")`. */
function specifiersOf(path: string): Array<{ specifier: string; line: number }> {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const found: Array<{ specifier: string; line: number }> = [];
  const add = (node: TypeScript.Node | undefined): void => {
    if (node && ts.isStringLiteralLike(node)) {
      found.push({ specifier: node.text, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
    }
  };
  const visit = (node: TypeScript.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) add(node.moduleSpecifier);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0]);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal);
    else if (ts.isExternalModuleReference(node)) add(node.expression);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** `./x.js` written in ESM style names `x.ts` in the source tree. */
function resolveRelative(root: string, fromFile: string, specifier: string, known: Set<string>): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base.replace(/\.(m?)js$/, ".$1ts"), base, `${base}.ts`, join(base, "index.ts")];
  for (const candidate of candidates) {
    const rel = toPosix(relative(root, candidate));
    if (known.has(rel)) return rel;
  }
  return undefined;
}

/** The import edges between modules under `root` (package and `node:` imports are not edges). */
function importEdges(root: string): ImportEdge[] {
  const files = sourceFiles(root);
  const known = new Set(files.map((file) => toPosix(relative(root, file))));
  const edges: ImportEdge[] = [];
  for (const file of files) {
    for (const { specifier, line } of specifiersOf(file)) {
      if (!specifier.startsWith(".")) continue;
      const to = resolveRelative(root, file, specifier, known);
      edges.push({ from: toPosix(relative(root, file)), line, specifier, to });
    }
  }
  return edges;
}

/** The rule that governs a module: the one with the longest folder containing it; none for neutral modules. */
function ruleFor(module: string, rules: LayerRule[]): LayerRule | undefined {
  return rules.filter((rule) => module.startsWith(rule.folder)).sort((a, b) => b.folder.length - a.folder.length)[0];
}

/** A file directly under `src/`: the bottom of the house, importing only its own kind. */
const isRootModule = (module: string): boolean => !module.includes("/");

function describe(rule: LayerRule | undefined): string {
  if (!rule) return "neutral modules (files directly under src/) may import only other neutral modules";
  if (rule.neutral) {
    const allowed = ["files directly under src/", ...rule.mayImport].join(", ");
    return `${rule.folder} is neutral: it may import only its own folder and ${allowed}`;
  }
  const allowed =
    rule.mayImport.length > 0 ? `${rule.mayImport.join(", ")} and neutral modules` : "neutral modules only";
  return `${rule.folder} may import ${allowed}`;
}

/** Why an import breaks the table, or undefined when it is allowed. */
function breach(edge: ImportEdge, rules: LayerRule[]): string | undefined {
  if (edge.to === undefined) return "a relative import must name a module under src/";
  const to = edge.to;
  if (isRootModule(edge.from)) return isRootModule(to) ? undefined : describe(undefined);
  const rule = ruleFor(edge.from, rules);
  if (!rule) return `${edge.from.split("/")[0]}/ has no rule in the layer table: add one`;
  if (isRootModule(to)) return undefined;
  // Within its own folder a layer is free; a nested layer (skills/disclosure/) is not its parent's "own".
  const toRule = ruleFor(to, rules);
  if (toRule === rule) return undefined;
  // A layer may import any neutral folder; a neutral folder only what its rule lists.
  if (!rule.neutral && toRule?.neutral) return undefined;
  const allowed = rule.mayImport.some((target) => (target.endsWith("/") ? to.startsWith(target) : to === target));
  return allowed ? undefined : describe(rule);
}

/** Import cycles between modules (Tarjan's strongly connected components), each as a closed path. */
function importCycles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (to === undefined) continue;
    next.set(from, [...new Set([...(next.get(from) ?? []), to])].sort());
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const target of next.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node)!, index.get(target)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    const selfLoop = (next.get(node) ?? []).includes(node);
    if (component.length > 1 || selfLoop) cycles.push(closedPath(component, next));
  };
  for (const node of [...next.keys()].sort()) if (!index.has(node)) connect(node);
  return cycles;
}

/** The shortest cycle through a strongly connected component, from its first module by name and back. */
function closedPath(component: string[], next: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = [...component].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    for (const target of (next.get(node) ?? []).filter((t) => members.has(t))) {
      if (target === start) {
        const path = [node];
        while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}

/** Where the CLI dispatches from: every cli/ module it imports that exports `main` is a command. */
const CLI_ENTRY = "cli/main.ts";

/** Whether a module exports a function `main` (a command's entry; main.ts also loads the help printer). */
function exportsMain(path: string): boolean {
  const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
  const exported = (node: TypeScript.Node) =>
    (ts.getCombinedModifierFlags(node as TypeScript.Declaration) & ts.ModifierFlags.Export) !== 0;
  return source.statements.some((statement) =>
    ts.isFunctionDeclaration(statement)
      ? statement.name?.text === "main" && exported(statement)
      : ts.isVariableStatement(statement) &&
        exported(statement) &&
        statement.declarationList.declarations.some((d) => ts.isIdentifier(d.name) && d.name.text === "main"),
  );
}

/**
 * The CLI only parses and dispatches: a command module (one cli/main.ts loads) is imported by no
 * other module, so what two commands share lives in a layer below or in a cli/ helper.
 */
function commandBreaches(root: string, edges: ImportEdge[]): LayerViolation[] {
  const commands = new Set(
    edges
      .filter((e) => e.from === CLI_ENTRY && e.to?.startsWith("cli/") && exportsMain(join(root, e.to)))
      .map((e) => e.to as string),
  );
  return edges
    .filter((e) => e.from !== CLI_ENTRY && e.to !== undefined && commands.has(e.to))
    .map((e) => ({
      ...e,
      rule: `${e.to} is a command that only ${CLI_ENTRY} loads; move what is shared out of it`,
    }));
}

/** Holds every import under `root` (a `src/` tree) against the rules, and finds every import cycle. */
export function checkLayers(root: string, rules: LayerRule[] = LAYER_RULES): LayerReport {
  const edges = importEdges(root);
  const violations: LayerViolation[] = [];
  for (const edge of edges) {
    const rule = breach(edge, rules);
    if (rule) violations.push({ ...edge, rule });
  }
  violations.push(...commandBreaches(root, edges));
  return { edges, violations, cycles: importCycles(edges) };
}

export function formatViolation(v: LayerViolation): string {
  return `${v.from}:${v.line} imports "${v.specifier}"${v.to ? ` (${v.to})` : ""}: ${v.rule}`;
}

export function formatCycle(cycle: string[]): string {
  return `import cycle: ${cycle.join(" → ")}`;
}
