#!/usr/bin/env node
/**
 * Are two sets of runs the same apart from when they happened? Compares run folders byte for byte
 * after blanking the values that record time or the process: run ids (time + pid), `ts`, `durationMs`,
 * `firstByteMs`, `cachedAt`, `startedAt`/`endedAt`, and the port of a request's `url` on 127.0.0.1
 * (a run on pi reaches the mock on a port the system chose). Everything else — request bodies,
 * records, token counts, events, wire logs — must match exactly. Used to show that a change left
 * nothing observable different: run the probes in two checkouts (or before and after), then
 *
 *   node scripts/compare-run-files.mjs <runs dir A> <runs dir B> [probe ...]
 *
 * With no probe names, every run folder present in A is compared. Exit 0 when all match, 1 otherwise.
 *
 * The run index (requests.index.jsonl) is left out: it is derived from requests.jsonl, which is
 * compared, and its byte offsets move with every run id's and duration's length; a run written
 * before the index existed has none. Whether an index agrees with its requests.jsonl is the tests'
 * business (test/cli/run-index.test.ts).
 */
import "./help.mjs";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { RUN_INDEX_FILE } from "../dist/capture/run-format.js";

const [dirA, dirB, ...names] = process.argv.slice(2);
if (!dirA || !dirB) {
  console.error("usage: node scripts/compare-run-files.mjs <runs dir A> <runs dir B> [probe ...]");
  process.exit(2);
}

const TIMED_STRINGS = ["ts", "cachedAt", "startedAt", "endedAt"];
const TIMED_NUMBERS = ["durationMs", "firstByteMs"];
/** A run id is `<probe>-<yyyymmdd>-<hhmmssmmm>-<pid>`. */
const RUN_ID = /-\d{8}-\d{9}-\d+"/g;
/** The mock a run on pi reaches listens on an ephemeral port; only the `url` field carries it. */
const LOCAL_URL = /"url":"http:\/\/127\.0\.0\.1:\d+\//g;

function blankTimes(text) {
  let out = text.replace(RUN_ID, '-RUN"').replace(LOCAL_URL, '"url":"http://127.0.0.1:PORT/');
  for (const key of TIMED_STRINGS) out = out.replace(new RegExp(`"${key}":"[^"]*"`, "g"), `"${key}":"T"`);
  for (const key of TIMED_NUMBERS) out = out.replace(new RegExp(`"${key}":(-?[\\d.e+-]+|null)`, "g"), `"${key}":0`);
  return out;
}

function compareFolder(name) {
  const a = join(dirA, name);
  const b = join(dirB, name);
  if (!existsSync(b)) return [`${name}: missing in ${dirB}`];
  const files = new Set([...readdirSync(a), ...readdirSync(b)].filter((file) => file !== RUN_INDEX_FILE));
  const problems = [];
  for (const file of [...files].sort()) {
    if (!existsSync(join(a, file)) || !existsSync(join(b, file))) {
      problems.push(`${name}/${file}: only on one side`);
      continue;
    }
    const linesA = blankTimes(readFileSync(join(a, file), "utf8")).split("\n");
    const linesB = blankTimes(readFileSync(join(b, file), "utf8")).split("\n");
    const at = linesA.findIndex((line, i) => line !== linesB[i]);
    if (at >= 0 || linesA.length !== linesB.length) {
      const line = at >= 0 ? at : Math.min(linesA.length, linesB.length);
      problems.push(
        `${name}/${file} line ${line + 1} differs:\n  A: ${linesA[line]?.slice(0, 300)}\n  B: ${linesB[line]?.slice(0, 300)}`,
      );
    }
  }
  return problems;
}

const probes = names.length ? names : readdirSync(dirA).filter((entry) => statSync(join(dirA, entry)).isDirectory());
let failed = 0;
for (const name of probes) {
  const problems = compareFolder(name);
  if (problems.length === 0) console.log(`${name}: identical apart from times`);
  else {
    failed++;
    for (const problem of problems) console.log(problem);
  }
}
console.log(failed ? `${failed} of ${probes.length} runs differ` : `all ${probes.length} runs match`);
process.exitCode = failed ? 1 : 0;
