/** Builds real skill trees in temp folders for the skills tests. */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A fresh temp dir with symlinks resolved, so expected paths match what the loader reports. */
export function makeTempDir(): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "payload-probe-skills-")));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Writes each `relative path → content`; a path ending in `/` makes an empty directory. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [relPath, content] of Object.entries(files)) {
    const path = join(root, relPath);
    if (relPath.endsWith("/")) {
      mkdirSync(path, { recursive: true });
      continue;
    }
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}

export function link(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/** A skill file; fields left out are absent from the frontmatter. */
export function skillMd(fields: { name?: string; description?: string; extra?: string }, body = "Body."): string {
  const lines = ["---"];
  if (fields.name !== undefined) lines.push(`name: ${fields.name}`);
  if (fields.description !== undefined) lines.push(`description: ${JSON.stringify(fields.description)}`);
  if (fields.extra) lines.push(fields.extra);
  lines.push("---", body, "");
  return lines.join("\n");
}
