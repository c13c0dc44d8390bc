import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openaiCompletions } from "../providers/openai-completions.js";
import { Capture } from "./capture.js";
import { RunDatabase, type RunStatus } from "./sqlite.js";
import type { MarkerSpec } from "./types.js";

/** A run id: the name, the start time to the second, and the process, so two runs never share one. */
export function newRunId(name: string): string {
  return `${name}-${new Date().toISOString().replace(/[-:.]/g, "").replace("T", "-").slice(0, 18)}-${process.pid}`;
}

export interface CaptureRunOptions {
  /** Names the run folder `<runsDir>/<name>/` (replaced) and the run's `probe` column. */
  name: string;
  runsDir: string;
  /** Also append to `<runsDir>/payload-probe.db` (default true). */
  database?: boolean;
  markers?: Record<string, MarkerSpec>;
  /** See CaptureOptions: the mock and the proxy keep no records in memory. */
  keepRecords?: boolean;
  redactBody?: (text: string) => string;
}

export interface CaptureRun {
  id: string;
  dir: string;
  capture: Capture;
  /** The run database, when the run is recorded there too (the probe runner adds its events). */
  db: RunDatabase | null;
  /** Closes the files, records how the run ended in the database and closes it. */
  close(status?: RunStatus): void;
}

/** A run's folder, id, database row and capture: for probe runs, the mock server and the capture proxy alike. */
export function openCaptureRun(options: CaptureRunOptions): CaptureRun {
  const dir = join(options.runsDir, options.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const id = newRunId(options.name);
  const db = options.database === false ? null : new RunDatabase(join(options.runsDir, "payload-probe.db"));
  db?.startRun(id, options.name, dir);
  const capture = new Capture({
    run: id,
    probe: options.name,
    dir,
    db,
    markers: options.markers ?? {},
    codecFor: () => openaiCompletions,
    keepRecords: options.keepRecords,
    redactBody: options.redactBody,
  });
  return {
    id,
    dir,
    capture,
    db,
    close(status = "captured") {
      capture.close();
      db?.finishRun(id, status);
      db?.close();
    },
  };
}
