/**
 * "No module under src/ exports a value that no other module imports": a walk over every import of
 * src/, test/ and scripts/ (static, re-exports, `import()`, `import("…").X` types, and `dist/….js`
 * paths a test or script loads at run time, which count as using all of that module). Types are left
 * out: an exported function's signature names them, so they stay exported with it.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import type * as TypeScript from "typescript";
import { ts } from "./fixtures/typescript.js";

/** An exported value no other module imports: `file name`, the file relative to `src/`. */
export type UnusedExport = string;

function filesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files.push(...filesUnder(path));
    else if (/\.(ts|mjs)$/.test(name) && !name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

const exported = (node: TypeScript.Node): boolean =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

/** The values a module exports by declaration: functions, classes, enums, variables (not types). */
function exportedValues(source: TypeScript.SourceFile): string[] {
  const names: string[] = [];
  for (const statement of source.statements) {
    if (!exported(statement)) continue;
    if (ts.isVariableStatement(statement))
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    if (
      (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) &&
      statement.name
    )
      names.push(statement.name.text);
  }
  return names;
}

/**
 * Every name each module of `files` is imported by, `*` for a module used whole; and the values each
 * module of `modules` exports, read in the same pass (each file is parsed once).
 */
function importedNames(
  root: string,
  files: string[],
  modules: Set<string>,
): { used: Map<string, Set<string>>; exports: Map<string, string[]> } {
  const used = new Map<string, Set<string>>();
  const exports = new Map<string, string[]>();
  const note = (module: string | undefined, name: string) => {
    if (module === undefined) return;
    used.set(module, (used.get(module) ?? new Set()).add(name));
  };
  const src = join(root, "src");
  const target = (from: string, specifier: string): string | undefined => {
    if (!specifier.startsWith(".")) return undefined;
    const base = resolve(dirname(from), specifier).replace(join(root, "dist"), src);
    return [base.replace(/\.js$/, ".ts"), base, `${base}.ts`].find((path) => modules.has(path));
  };
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    if (modules.has(file)) exports.set(file, exportedValues(source));
    const visit = (node: TypeScript.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const module = target(file, node.moduleSpecifier.text);
        const clause = node.importClause;
        const bindings = clause?.namedBindings;
        if (!clause || (bindings && ts.isNamespaceImport(bindings))) note(module, "*");
        if (clause?.name) note(module, "default");
        if (bindings && ts.isNamedImports(bindings))
          for (const e of bindings.elements) note(module, (e.propertyName ?? e.name).text);
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const module = target(file, node.moduleSpecifier.text);
        const clause = node.exportClause;
        if (clause && ts.isNamedExports(clause))
          for (const e of clause.elements) note(module, (e.propertyName ?? e.name).text);
        else note(module, "*");
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const specifier = node.arguments[0];
        if (specifier && ts.isStringLiteralLike(specifier)) note(target(file, specifier.text), "*");
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    // A built module loaded by its path at run time (a child process's script, a benchmark).
    for (const match of text.matchAll(/dist\/([\w/.-]+)\.js/g)) note(join(src, `${match[1]}.ts`), "*");
  }
  return { used, exports };
}

/** The exported values of the modules under `root/src` that no module of src/, test/ or scripts/ imports. */
export function unusedExports(root: string): UnusedExport[] {
  const src = join(root, "src");
  const modules = filesUnder(src).filter((file) => file.endsWith(".ts"));
  const importers = [src, join(root, "test"), join(root, "scripts")].flatMap((dir) => {
    try {
      return filesUnder(dir);
    } catch {
      return [];
    }
  });
  const { used, exports } = importedNames(root, importers, new Set(modules));
  return modules.flatMap((module) => {
    const names = used.get(module) ?? new Set();
    if (names.has("*")) return [];
    const file = relative(src, module).split(sep).join("/");
    return (exports.get(module) ?? []).filter((name) => !names.has(name)).map((name) => `${file} ${name}`);
  });
}
