import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../src/project-root.js";

/** The front door and the manual's pages, as paths relative to the checkout. */
function pages(): string[] {
  const docs = readdirSync(join(PROJECT_ROOT, "docs")).filter((name) => name.endsWith(".md"));
  return ["README.md", ...docs.map((name) => join("docs", name))];
}

/** Every relative link target of a markdown text (web links and in-page anchors left out). */
function relativeLinks(text: string): string[] {
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!.split("#")[0]!);
  return targets.filter((target) => target !== "" && !/^[a-z]+:/i.test(target));
}

describe("the README and docs/ link to each other by paths that exist", () => {
  it("finds the pages and their links", () => {
    expect(pages().length).toBeGreaterThan(5);
    expect(relativeLinks("[a](docs/a.md#x) [b](https://x.org) [c](#y) [d](../e.md)")).toEqual(["docs/a.md", "../e.md"]);
  });

  it("every relative link of every page names a file or folder of the checkout", () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const text = readFileSync(join(PROJECT_ROOT, page), "utf8");
      for (const target of relativeLinks(text))
        if (!existsSync(join(PROJECT_ROOT, dirname(page), target))) broken.push(`${page} -> ${target}`);
    }
    expect(broken).toEqual([]);
  });

  it("every page of docs/ is linked from the manual's index", () => {
    const index = readFileSync(join(PROJECT_ROOT, "docs", "README.md"), "utf8");
    const linked = new Set(relativeLinks(index));
    const unlinked = pages().filter((page) => page.startsWith("docs") && !page.endsWith("README.md"));
    expect(unlinked.filter((page) => !linked.has(page.slice("docs/".length)))).toEqual([]);
  });
});
