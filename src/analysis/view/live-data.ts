/**
 * The live view's data (live-view.ts): a run folder as it is now, in the page's layout
 * (view-page.ts, `writeLiveData`). Built on a worker thread (live-data-worker.ts), so the command's
 * relay never waits for a page; these are the build and the messages both sides exchange.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { TokenCountCache } from "../../capture/token-count-cache.js";
import type { MarkerSpec } from "../../capture/types.js";
import { folderSource } from "../load-run.js";
import { runFileBytes, segmentMeasure, viewReplies } from "./view-inputs.js";
import { writeLiveData } from "./view-page.js";

export interface LiveDataRequest {
  id: number;
  dir: string;
  name: string;
  markers: Record<string, MarkerSpec>;
}

export type LiveDataReply =
  | { id: number; data: ArrayBuffer }
  | { id: number; error: { name: string; message: string; stack?: string } };

/** The run in `dir` as data.json serves it; `tokens` is kept from build to build. */
export async function buildLiveData(request: LiveDataRequest, tokens: TokenCountCache): Promise<Buffer> {
  const { dir, name, markers } = request;
  const source = { ...folderSource(dir, { runsDir: dirname(dir) }), label: name };
  const counter = await segmentMeasure([source], tokens);
  const replies = await viewReplies([source]);
  // view-data writes side files beside its output: a private folder holds them, removed at once.
  const scratch = mkdtempSync(join(tmpdir(), "payload-probe-view-"));
  try {
    const file = join(scratch, "data.json");
    writeLiveData(file, source, { counter, markers, rawBytes: runFileBytes(source), replies });
    return readFileSync(file);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
