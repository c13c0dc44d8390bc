import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { keepHead } from "../../output-limit.js";
import type { ToolTexts } from "../profile.js";
import type { RuntimeTool } from "../types.js";
import { optionalNumber, resolvePath } from "./paths.js";
import { arrayProp, objectSchema, prop, toolHeader } from "./schema.js";

type Texts = (name: string) => ToolTexts;

export function readTool(texts: Texts): RuntimeTool {
  const t = texts("read");
  return {
    ...toolHeader("read", t),
    parameters: objectSchema(
      {
        path: prop("string", t.parameters.path!),
        offset: prop("number", t.parameters.offset!),
        limit: prop("number", t.parameters.limit!),
      },
      ["path"],
    ),
    async execute(args, ctx) {
      const path = resolvePath(ctx, args.path);
      const offset = optionalNumber(args.offset, "offset") ?? 1;
      const limit = optionalNumber(args.limit, "limit");
      const lines = (await readFile(path, "utf8")).split("\n");
      if (offset < 1 || offset > lines.length) {
        throw new Error(`offset ${offset} is beyond the end of ${path} (${lines.length} lines)`);
      }
      const wanted = lines.slice(offset - 1, limit === undefined ? undefined : offset - 1 + limit);
      const cut = keepHead(wanted.join("\n"));
      const lastShown = offset + cut.shownLines - 1;
      const more = cut.truncated || (limit !== undefined && offset - 1 + limit < lines.length);
      const notice = more
        ? `\n\n[Showing lines ${offset}-${lastShown} of ${lines.length}. Use offset=${lastShown + 1} to continue.]`
        : "";
      return { content: cut.text + notice };
    },
  };
}

export function writeTool(texts: Texts): RuntimeTool {
  const t = texts("write");
  return {
    ...toolHeader("write", t),
    parameters: objectSchema(
      { path: prop("string", t.parameters.path!), content: prop("string", t.parameters.content!) },
      ["path", "content"],
    ),
    async execute(args, ctx) {
      const path = resolvePath(ctx, args.path);
      if (typeof args.content !== "string") throw new Error("content must be a string");
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, args.content);
      return { content: `Successfully wrote to ${args.path}` };
    },
  };
}

interface Edit {
  oldText: string;
  newText: string;
}

function parseEdits(value: unknown): Edit[] {
  if (!Array.isArray(value) || value.length === 0) throw new Error("edits must be a non-empty array");
  return value.map((edit, i) => {
    const e = edit as Partial<Edit>;
    if (typeof e?.oldText !== "string" || typeof e?.newText !== "string" || e.oldText === "") {
      throw new Error(`edits[${i}] needs a non-empty oldText and a newText string`);
    }
    return { oldText: e.oldText, newText: e.newText };
  });
}

/** Every edit is located in the original text, so the order of edits in a call never matters. */
function applyEdits(original: string, edits: Edit[], path: string): string {
  const located = edits.map((edit, i) => {
    const at = original.indexOf(edit.oldText);
    if (at < 0) throw new Error(`edits[${i}].oldText was not found in ${path}`);
    if (original.indexOf(edit.oldText, at + 1) >= 0) {
      throw new Error(`edits[${i}].oldText occurs more than once in ${path}; add surrounding text to make it unique`);
    }
    return { ...edit, at, end: at + edit.oldText.length, index: i };
  });
  located.sort((a, b) => a.at - b.at);
  for (let i = 1; i < located.length; i++) {
    if (located[i]!.at < located[i - 1]!.end) {
      throw new Error(`edits[${located[i - 1]!.index}] and edits[${located[i]!.index}] overlap in ${path}; merge them`);
    }
  }
  let result = "";
  let cursor = 0;
  for (const edit of located) {
    result += original.slice(cursor, edit.at) + edit.newText;
    cursor = edit.end;
  }
  return result + original.slice(cursor);
}

export function editTool(texts: Texts): RuntimeTool {
  const t = texts("edit");
  return {
    ...toolHeader("edit", t),
    parameters: objectSchema(
      {
        path: prop("string", t.parameters.path!),
        edits: arrayProp(
          objectSchema(
            { oldText: prop("string", t.parameters.oldText!), newText: prop("string", t.parameters.newText!) },
            ["oldText", "newText"],
          ),
          t.parameters.edits!,
        ),
      },
      ["path", "edits"],
    ),
    async execute(args, ctx) {
      const path = resolvePath(ctx, args.path);
      const edits = parseEdits(args.edits);
      const original = await readFile(path, "utf8");
      await writeFile(path, applyEdits(original, edits, String(args.path)));
      return { content: `Successfully replaced ${edits.length} block(s) in ${args.path}.` };
    },
  };
}
