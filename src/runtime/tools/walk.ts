import { type Dirent, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

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

/** A glob (`**`, `*`, `?`, `{a,b}`) as a regular expression over `/`-separated relative paths. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const slash = glob[i + 2] === "/";
      out += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else if (c === "{") {
      const close = glob.indexOf("}", i);
      if (close < 0) out += "\\{";
      else {
        out += `(?:${glob
          .slice(i + 1, close)
          .split(",")
          .map(escapeRegExp)
          .join("|")})`;
        i = close;
      }
    } else out += escapeRegExp(c);
  }
  return new RegExp(`^${out}$`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function toPosixRelative(from: string, path: string): string {
  return relative(from, path).split(sep).join("/");
}
