/**
 * "No function in src/ is over 60 lines", as a walk over the TypeScript syntax tree: every function
 * declaration and expression, arrow, method, constructor and accessor, counted from its first line
 * (its doc comment left out) to its last. A nested function counts on its own and inside its parent.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type * as TypeScript from "typescript";
import { ts } from "./fixtures/typescript.js";

export const MAX_FUNCTION_LINES = 60;

export interface LongFunction {
  /** `file:line name`, the file relative to the walked folder. */
  where: string;
  name: string;
  lines: number;
}

/** The name a reader would look for: the declared name, or what an arrow is assigned to. */
function nameOf(node: TypeScript.FunctionLikeDeclaration, source: TypeScript.SourceFile): string {
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
    return parent.name.getText(source);
  return "<anonymous>";
}

/** Functions longer than `max` lines in one file's text. */
export function longFunctionsIn(file: string, text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: LongFunction[] = [];
  const visit = (node: TypeScript.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = nameOf(node as TypeScript.FunctionLikeDeclaration, source);
      if (lines > max) found.push({ where: `${file}:${first + 1} ${name}`, name, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every function over the limit in the `.ts` files under `root`. */
export function longFunctions(root: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const files = readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .sort();
  return files.flatMap((file) =>
    longFunctionsIn(relative(root, join(root, file)), readFileSync(join(root, file), "utf8"), max),
  );
}
