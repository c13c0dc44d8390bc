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
 *
 * payloads.jsonl is compared row by row as its rows read: a request body stored in parts
 * (src/capture/payload-rows.ts) is joined from them, checked against its hash, and compared as the
 * row it would have been stored whole; part rows themselves are not compared. So a run written
 * before parts and one written after compare equal when every body is the same byte for byte.
 */
import "./help.mjs";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { PART_HEAD, wholeRow } from "../dist/capture/payload-rows.js";
import { PAYLOADS_FILE, RUN_INDEX_FILE } from "../dist/capture/run-format.js";

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

/** A payloads file's rows as lines, each request body whole (joined from its parts), part rows left out. */
function wholePayloadLines(path) {
  const parts = new Map();
  const lines = [];
  const text = readFileSync(path, "utf8").split("\n");
  for (const [i, line] of text.entries()) {
    if (PART_HEAD.test(line)) {
      const part = JSON.parse(line);
      parts.set(part.hash, part.text);
    } else if (line === "") lines.push(line);
    else {
      const problem = (what) => new Error(`${path} line ${i + 1}: ${what}`);
      lines.push(JSON.stringify(wholeRow(JSON.parse(line), (hash) => parts.get(hash), problem)));
    }
  }
  return lines.join("\n");
}

const fileText = (path) => (path.endsWith(PAYLOADS_FILE) ? wholePayloadLines(path) : readFileSync(path, "utf8"));

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
    const linesA = blankTimes(fileText(join(a, file))).split("\n");
    const linesB = blankTimes(fileText(join(b, file))).split("\n");
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
