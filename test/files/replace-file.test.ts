/**
 * src/files/replace-file.ts from two threads of one process writing the same file at once, as the
 * capture worker and the CLI's main thread may (a code cache, token facts): each write is whole or
 * not at all, and neither writer's rename finds its temp file gone. The threads are real worker
 * threads running the module as tsc built it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterEach, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const MODULE = pathToFileURL(join(PROJECT_ROOT, "dist/files/replace-file.js")).href;

/** A thread that writes `path` `times` times, each time 2 MiB of its own letter; resolves with its errors. */
function writer(path: string, letter: string, times: number): Promise<string[]> {
  const code = `
    const { workerData, parentPort } = require("node:worker_threads");
    import(workerData.module).then(({ replaceFile }) => {
      const data = Buffer.alloc(2 * 1024 * 1024, workerData.letter);
      const errors = [];
      for (let i = 0; i < workerData.times; i++) {
        try { replaceFile(workerData.path, data); } catch (error) { errors.push(error.code ?? error.message); }
      }
      parentPort.postMessage(errors);
    });`;
  const worker = new Worker(code, { eval: true, workerData: { module: MODULE, path, letter, times } });
  return new Promise((resolve, reject) => {
    worker.once("message", (errors: string[]) => void worker.terminate().then(() => resolve(errors)));
    worker.once("error", reject);
  });
}

it("two threads writing one file leave one whole file, and neither write fails", async () => {
  const dir = tempDir("replace-file-");
  const path = join(dir, "shared.bin");
  const errors = await Promise.all([writer(path, "a", 60), writer(path, "b", 60)]);
  expect(errors).toEqual([[], []]);
  const text = readFileSync(path, "latin1");
  expect(text.length).toBe(2 * 1024 * 1024);
  expect(new Set(text).size).toBe(1);
  expect(readdirSync(dir)).toEqual(["shared.bin"]);
});
