import { readdirSync, readFileSync, statSync } from "node:fs";
import { keepHead } from "../../output-limit.js";
import { escapeRegExp } from "../../text/regexp.js";
import type { ToolTexts } from "../profile.js";
import type { RuntimeTool } from "../types.js";
import { optionalNumber, resolvePath } from "./paths.js";
import { objectSchema, prop, toolHeader } from "./schema.js";
import { globMatcher, toPosixRelative, walkFiles } from "./walk.js";

type Texts = (name: string) => ToolTexts;
const LINE_CUT = 500;

function finish(lines: string[], limit: number, hitLimit: boolean, noun: string): string {
  if (lines.length === 0) return `No ${noun} found`;
  let text = keepHead(lines.join("\n")).text;
  if (hitLimit) text += `\n\n[Stopped at ${limit} ${noun}; narrow the search or raise limit.]`;
  return text;
}

export function grepTool(texts: Texts): RuntimeTool {
  const t = texts("grep");
  return {
    ...toolHeader("grep", t),
    parameters: objectSchema(
      {
        pattern: prop("string", t.parameters.pattern!),
        path: prop("string", t.parameters.path!),
        glob: prop("string", t.parameters.glob!),
        ignoreCase: prop("boolean", t.parameters.ignoreCase!),
        literal: prop("boolean", t.parameters.literal!),
        context: prop("number", t.parameters.context!),
        limit: prop("number", t.parameters.limit!),
      },
      ["pattern"],
    ),
    async execute(args, ctx) {
      if (typeof args.pattern !== "string" || args.pattern === "")
        throw new Error("pattern must be a non-empty string");
      const root = args.path === undefined ? ctx.cwd : resolvePath(ctx, args.path);
      const limit = optionalNumber(args.limit, "limit") ?? 100;
      const context = optionalNumber(args.context, "context") ?? 0;
      const source = args.literal === true ? escapeRegExp(args.pattern) : args.pattern;
      const regex = new RegExp(source, args.ignoreCase === true ? "i" : "");
      const only = typeof args.glob === "string" ? globMatcher(args.glob) : undefined;
      const files = statSync(root).isFile() ? [root] : walkFiles(root);
      const out: string[] = [];
      let matches = 0;
      for (const file of files) {
        const rel = toPosixRelative(ctx.cwd, file);
        if (only && !only(toPosixRelative(root, file))) continue;
        const lines = readFileSync(file, "utf8").split("\n");
        // A final newline ends the last line; it does not start another one.
        if (lines.at(-1) === "") lines.pop();
        const hits: number[] = [];
        for (let i = 0; i < lines.length && matches + hits.length < limit; i++) if (regex.test(lines[i]!)) hits.push(i);
        matches += hits.length;
        // Context windows of nearby matches merge, as in ripgrep: each line is shown once, as a match if it is one.
        let nextUnshown = 0;
        for (const i of hits) {
          for (let j = Math.max(nextUnshown, i - context); j <= Math.min(lines.length - 1, i + context); j++) {
            const sepChar = hits.includes(j) ? ":" : "-";
            out.push(`${rel}${sepChar}${j + 1}${sepChar} ${lines[j]!.slice(0, LINE_CUT)}`);
          }
          nextUnshown = Math.max(nextUnshown, i + context + 1);
        }
        if (matches >= limit) break;
      }
      return { content: finish(out, limit, matches >= limit, "matches") };
    },
  };
}

export function findTool(texts: Texts): RuntimeTool {
  const t = texts("find");
  return {
    ...toolHeader("find", t),
    parameters: objectSchema(
      {
        pattern: prop("string", t.parameters.pattern!),
        path: prop("string", t.parameters.path!),
        limit: prop("number", t.parameters.limit!),
      },
      ["pattern"],
    ),
    async execute(args, ctx) {
      if (typeof args.pattern !== "string" || args.pattern === "")
        throw new Error("pattern must be a non-empty string");
      const root = args.path === undefined ? ctx.cwd : resolvePath(ctx, args.path);
      const limit = optionalNumber(args.limit, "limit") ?? 1000;
      const matches = globMatcher(args.pattern);
      // A pattern without a slash matches a file name at any depth, as `find -name` would.
      const byName = !args.pattern.includes("/");
      const out: string[] = [];
      for (const file of walkFiles(root)) {
        const rel = toPosixRelative(root, file);
        if (matches(byName ? rel.slice(rel.lastIndexOf("/") + 1) : rel)) out.push(rel);
        if (out.length >= limit) break;
      }
      return { content: finish(out, limit, out.length >= limit, "files") };
    },
  };
}

export function lsTool(texts: Texts): RuntimeTool {
  const t = texts("ls");
  return {
    ...toolHeader("ls", t),
    parameters: objectSchema(
      { path: prop("string", t.parameters.path!), limit: prop("number", t.parameters.limit!) },
      [],
    ),
    async execute(args, ctx) {
      const dir = args.path === undefined ? ctx.cwd : resolvePath(ctx, args.path);
      const limit = optionalNumber(args.limit, "limit") ?? 500;
      const names = readdirSync(dir, { withFileTypes: true })
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
      if (names.length === 0) return { content: "(empty directory)" };
      return { content: finish(names.slice(0, limit), limit, names.length > limit, "entries") };
    },
  };
}
