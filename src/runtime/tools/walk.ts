import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import picomatch from "picomatch";

/**
 * Files below a folder in sorted order, skipping `.git`, `node_modules` and whatever the .gitignore
 * files along the way exclude (each applies to its own folder and below).
 */
export function* walkFiles(root: string): Generator<string> {
  yield* walk(root, root, []);
}

interface Scoped {
  base: string;
  rules: Ignore;
}

function loadIgnore(dir: string): Scoped | null {
  try {
    return { base: dir, rules: ignore().add(readFileSync(join(dir, ".gitignore"), "utf8")) };
  } catch {
    return null;
  }
}

function ignored(path: string, isDir: boolean, scopes: Scoped[]): boolean {
  return scopes.some(({ base, rules }) => {
    const rel = relative(base, path).split(sep).join("/");
    return rel !== "" && rules.ignores(isDir ? `${rel}/` : rel);
  });
}

function* walk(root: string, dir: string, inherited: Scoped[]): Generator<string> {
  const own = loadIgnore(dir);
  const scopes = own ? [...inherited, own] : inherited;
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name === ".git" || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (ignored(path, entry.isDirectory(), scopes)) continue;
    if (entry.isDirectory()) yield* walk(root, path, scopes);
    else if (entry.isFile()) yield path;
  }
}

/**
 * A glob as a test over `/`-separated relative paths, with picomatch's bash-like syntax: `*`, `?`, `**`,
 * `[jt]` and `[!j]` classes, `{a,{b,c}}` braces (nested), extglobs and a leading `!` negation. Dotfiles match
 * like any other name (`sub/*` lists `sub/.gitignore`), since the walk already leaves out what
 * .gitignore excludes.
 */
export function globMatcher(glob: string): (path: string) => boolean {
  // posix: bracket classes as POSIX and bash read them, so `[!j]` negates (without it picomatch also
  // accepts the literal text `[!j]`, and `*.[!j]s` matches `a.js`).
  const isMatch = picomatch(glob, { dot: true, posix: true });
  // picomatch's second argument asks for a result object; callers such as Array.filter pass an index there.
  return (path) => isMatch(path);
}

export function toPosixRelative(from: string, path: string): string {
  return relative(from, path).split(sep).join("/");
}
