import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCaptureProxy } from "../../src/capture/capture-proxy.js";
import { serveHttp } from "../../src/capture/http.js";
import { RequestsWriter } from "../../src/capture/requests-writer.js";
import { indexRowDecoder } from "../../src/capture/run-index.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { runHandProbe, twoTurnProbe } from "../analysis/hand-runs.js";
import { chatBody, postChat } from "../capture/http-harness.js";
import { cliInProcess } from "../fixtures/cli-in-process.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

/** The built CLI as a user runs it. */
/** The command in this process (test/fixtures/cli-in-process.ts): what it prints is tested, not its start. */
const cli = (...args: string[]) => cliInProcess({}, ...args);

const INDEX = "requests.index.jsonl";
/** What the index keeps of a record, named here from outside as the format describes it. */
const SUMMARY_KEYS = [
  "probe",
  "seq",
  "kind",
  "ts",
  "api",
  "model",
  "tools",
  "toolsBytes",
  "toolsChars",
  "systemBytes",
  "systemChars",
  "messagesBytes",
  "messagesChars",
  "bodyBytes",
  "bodyChars",
  "roles",
  "markers",
  "tokens",
  "usage",
  "prefix",
  "hashes",
  "secrets",
  "cacheDiagnostics",
  "conversation",
  "status",
  "ending",
  "error",
] as const;

let dir: string;
let runs: string;
/** Run folders as captures wrote them. */
const RUNS = ["one", "two", "proxied"];

/** A proxy in front of an upstream that answers every chat with a short text stream; three chats and a side request. */
async function proxiedRun(): Promise<void> {
  const upstream = await serveHttp(
    async (request, response) => {
      for await (const _ of request) {
        // Read to the end so the request completes.
      }
      response.writeHead(200, { "content-type": "text/event-stream" });
      const delta = { choices: [{ index: 0, delta: { role: "assistant", content: "fine" } }] };
      response.end(`data: ${JSON.stringify(delta)}\n\ndata: [DONE]\n\n`);
    },
    (error) => ({ status: 500, message: error.message }),
    0,
    "127.0.0.1",
  );
  const proxy = await startCaptureProxy({
    upstream: `http://127.0.0.1:${upstream.port}`,
    runsDir: runs,
    name: "proxied",
  });
  try {
    for (const text of ["first question", "second, with a key AKIAQ7XZ4M2R8K3P6WNB in it", "third"])
      await (await postChat(`${proxy.url}/v1/chat/completions`, chatBody(text, { model: `m-${text.length}` }))).text();
    await (await fetch(`${proxy.url}/v1/models`)).text();
  } finally {
    await proxy.close();
    await upstream.close();
  }
}

beforeAll(async () => {
  dir = tempDir("pp-index-");
  runs = join(dir, "runs");
  await runHandProbe(dir, "one", twoTurnProbe("one", "read"));
  await runHandProbe(dir, "two", twoTurnProbe("two", "read,bash", true));
  await proxiedRun();
});
afterAll(() => removeTempDirs());

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean);

/** A copy of a run folder under `variant/`, changed by `change` (given the copy's folder). */
function variant(name: string, label: string, change: (folder: string) => void): string {
  const folder = join(dir, label, name);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(join(dir, label), { recursive: true });
  cpSync(join(runs, name), folder, { recursive: true });
  change(folder);
  return folder;
}

const withoutIndex = (name: string) => variant(name, "no-index", (folder) => rmSync(join(folder, INDEX)));

/** report in every form that reads summaries, and diff, with the folder's own path blanked. */
async function outputs(folderOf: (name: string) => string): Promise<string[]> {
  const forms = [["--wide"], ["--plain"], ["--json"], ["--markdown"], ["--chars", "--plain"]];
  const said: string[] = [];
  const run = async (...args: string[]) => {
    const { code, out, err } = await cli(...args, "--runs", runs);
    let text = `${code}\n${out}\n${err}`;
    for (const name of RUNS) text = text.replaceAll(folderOf(name), `<${name}>`);
    said.push(text);
  };
  for (const name of RUNS) for (const form of forms) await run("report", folderOf(name), ...form);
  for (const form of [[], ["--json"], ["--markdown"]]) {
    await run("diff", folderOf("one"), folderOf("two"), ...form);
    await run("diff", folderOf("one"), folderOf("proxied"), ...form);
  }
  return said;
}

describe("the run index (requests.index.jsonl)", () => {
  it("a capture writes one row per record, ending where the record's line ends, decoding to what the record holds", async () => {
    for (const name of RUNS) {
      const records = lines(join(runs, name, "requests.jsonl"));
      const [header, ...rows] = lines(join(runs, name, INDEX));
      expect(JSON.parse(header!)).toEqual({ runIndex: 2 });
      expect(rows).toHaveLength(records.length);
      const decode = indexRowDecoder();
      let end = 0;
      records.forEach((line, i) => {
        end += Buffer.byteLength(line) + 1;
        const record = JSON.parse(line) as RequestRecord;
        const expected = Object.fromEntries(SUMMARY_KEYS.filter((k) => k in record).map((k) => [k, record[k]]));
        expect(decode(JSON.parse(rows[i]!))).toEqual({ n: i + 1, end, summary: expected });
      });
    }
    // The proxied run covers what the probe runs lack: several models, usage, a secret, a side request.
    const proxied = lines(join(runs, "proxied", "requests.jsonl")).map((l) => JSON.parse(l) as RequestRecord);
    expect(new Set(proxied.map((r) => r.model)).size).toBe(3);
    expect(proxied.some((r) => (r.secrets?.replaced ?? 0) > 0)).toBe(true);
  });

  it("report and diff print the same with the index as from requests.jsonl alone", async () => {
    const indexed = await outputs((name) => join(runs, name));
    const plain = await outputs(withoutIndex);
    expect(indexed).toEqual(plain);
    expect(indexed.join("\n")).toContain("request(s) have a payload but no row");
    expect(indexed.join("\n")).toContain("secrets: 1 replaced");
  });

  it("report reads the index while it agrees with requests.jsonl (an index row edited in place shows)", async () => {
    const folder = variant("one", "edited", (copy) => {
      const path = join(copy, INDEX);
      writeFileSync(path, readFileSync(path, "utf8").replace('"tools":["read"]', '"tools":["read-from-the-index"]'));
    });
    expect((await cli("report", folder, "--json")).out).toContain("read-from-the-index");
  });

  it("records the index lacks are read from requests.jsonl: a cut index, a torn last row, a record appended after a crash", async () => {
    const plainOut = async (name: string, ...args: string[]) => (await cli("report", withoutIndex(name), ...args)).out;
    const cut = variant("two", "cut", (copy) => {
      const path = join(copy, INDEX);
      writeFileSync(path, `${lines(path).slice(0, -2).join("\n")}\n`);
    });
    const torn = variant("two", "torn", (copy) => {
      const path = join(copy, INDEX);
      const text = readFileSync(path, "utf8");
      writeFileSync(path, text.slice(0, text.length - 30));
    });
    for (const folder of [cut, torn])
      expect((await cli("report", folder, "--json")).out).toBe(await plainOut("two", "--json"));
    const appendRecord = (copy: string) => {
      const last = JSON.parse(lines(join(copy, "requests.jsonl")).at(-1)!) as RequestRecord;
      appendFileSync(
        join(copy, "requests.jsonl"),
        `${JSON.stringify({ ...last, seq: last.seq + 1, tools: ["late"] })}\n`,
      );
    };
    const appended = variant("two", "appended", appendRecord);
    const appendedPlain = variant("two", "appended-plain", (copy) => {
      appendRecord(copy);
      rmSync(join(copy, INDEX));
    });
    const report = await cli("report", appended, "--json");
    expect(report.out).toContain('"late"');
    expect(report.out).toBe((await cli("report", appendedPlain, "--json")).out);
  });

  it("a capture that appends to a requests.jsonl it did not start adds no index rows; the index there still serves its records", async () => {
    const before = readFileSync(join(runs, "two", INDEX), "utf8");
    const late = { ...(JSON.parse(lines(join(runs, "one", "requests.jsonl"))[0]!) as RequestRecord), seq: 99 };
    const append = (copy: string) => {
      const writer = new RequestsWriter(copy);
      writer.write(late);
      writer.close();
    };
    const appended = variant("two", "append-writer", append);
    expect(readFileSync(join(appended, INDEX), "utf8")).toBe(before);
    const plain = variant("two", "append-writer-plain", (copy) => {
      rmSync(join(copy, INDEX));
      append(copy);
    });
    expect(existsSync(join(plain, INDEX))).toBe(false);
    const report = await cli("report", appended, "--json");
    expect(report.out).toContain('{"seq":99,');
    expect(report.out).toBe((await cli("report", plain, "--json")).out);
  });

  it("an index that does not agree or cannot be read is passed over: the run reads as from requests.jsonl, exit 0", async () => {
    const broken = {
      "corrupt-line": (path: string) => {
        const rows = lines(path);
        rows[2] = "{not json";
        writeFileSync(path, `${rows.join("\n")}\n`);
      },
      "wrong-shape": (path: string) => {
        const rows = lines(path);
        rows[1] = "[1,2,3]";
        writeFileSync(path, `${rows.join("\n")}\n`);
      },
      "newer-format": (path: string) =>
        writeFileSync(path, readFileSync(path, "utf8").replace('{"runIndex":2}', '{"runIndex":99}')),
      "another-runs-index": (path: string) => cpSync(join(runs, "one", INDEX), path),
      empty: (path: string) => writeFileSync(path, ""),
    };
    const expected = await cli("report", withoutIndex("two"), "--json");
    for (const [label, breakIndex] of Object.entries(broken)) {
      const folder = variant("two", label, (copy) => breakIndex(join(copy, INDEX)));
      const report = await cli("report", folder, "--json");
      expect({ label, ...report }).toEqual({ label, ...expected });
      expect((await cli("diff", folder, join(runs, "one"))).code).toBe(0);
    }
  });
});
