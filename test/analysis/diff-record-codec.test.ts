import { beforeAll, describe, expect, it } from "vitest";
import { type DiffRecord, diffRecordProjector } from "../../src/analysis/diff-record.js";
import { DiffRecordPacker, DiffRecordUnpacker } from "../../src/analysis/diff-record-codec.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { runCommittedProbes } from "../fixtures/probe-runs.js";

/** Packs records in batches of `size`, as the worker does, and unpacks them as the reader does. */
function roundTrip(records: DiffRecord[], size: number): DiffRecord[] {
  const packer = new DiffRecordPacker();
  const unpacker = new DiffRecordUnpacker();
  const out: DiffRecord[] = [];
  for (let i = 0; i < records.length; i += size)
    out.push(...unpacker.unpack(structuredClone(packer.pack(records.slice(i, i + size)))));
  return out;
}

/** What diff reads of a DiffRecord, in the form its JSON output writes it (key order included). */
const asRead = (r: DiffRecord) =>
  JSON.stringify([
    r.seq,
    r.kind,
    r.probe,
    r.tools,
    r.roles,
    r.userMessages,
    r.markers,
    r.bytes,
    r.tokens && [r.tokens.tools, r.tokens.system, r.tokens.messages, r.tokens.total],
    r.prefix,
    r.prefixSummary,
    [r.hashes.tools, r.hashes.system, r.hashes.body],
  ]);

let probeRecords: RequestRecord[] = [];
const committedRecords = (): RequestRecord[] => probeRecords;
// Loop and sampling requests, one and two system parts, markers, prefix breaks in tools.
beforeAll(async () => {
  probeRecords = await runCommittedProbes(["p1", "p6", "p7", "seq-search"]);
}, 120_000);

describe("DiffRecord packing between threads", () => {
  it("delivers every committed probe run's records as the main thread would project them", () => {
    const project = diffRecordProjector();
    const records = committedRecords().map(project);
    expect(records.length).toBeGreaterThan(20);
    for (const size of [1, 7, 128]) expect(roundTrip(records, size).map(asRead)).toEqual(records.map(asRead));
  });

  it("sends a record with unusual fields as JSON, so it arrives unchanged", () => {
    const base = committedRecords()[0]!;
    const odd: RequestRecord[] = [
      { ...base, seq: 1, prefix: null, tokens: null },
      { ...base, seq: 2, prefix: { sharedBytes: 10, breakAt: "tools", breakDetail: "tools[0] removed: x" } },
      { ...base, seq: 3, prefix: { breakAt: null, sharedBytes: 5, breakDetail: null } as RequestRecord["prefix"] },
      {
        ...base,
        seq: 4,
        prefix: {
          sharedBytes: 5,
          breakAt: null,
          breakDetail: null,
          sharedTokens: 2,
          extra: 1,
        } as RequestRecord["prefix"],
      },
      { ...base, seq: 5, bodyBytes: undefined as unknown as number, markers: { a: 1, b: 0 } },
      { ...base, seq: 6, tokens: { ...base.tokens!, total: "12" as unknown as number }, tools: ["x", "y"] },
      { ...base, seq: 7, hashes: { ...base.hashes, body: 7 as unknown as string } },
    ];
    const project = diffRecordProjector();
    const records = odd.map(project);
    const arrived = roundTrip(records, 3);
    expect(arrived.map(asRead)).toEqual(records.map(asRead));
    expect(Object.keys(arrived[2]!.prefix!)).toEqual(["breakAt", "sharedBytes", "breakDetail"]);
  });

  it("sends a tool list or marker set once while it repeats", () => {
    const base = committedRecords()[0]!;
    const records = Array.from({ length: 50 }, (_, i) =>
      diffRecordProjector()({ ...base, seq: i + 1, tools: [...base.tools] }),
    );
    const packer = new DiffRecordPacker();
    const first = packer.pack(records.slice(0, 25));
    const second = packer.pack(records.slice(25));
    expect(first.values.filter((value) => Array.isArray(value))).toHaveLength(1);
    expect(second.values).toEqual([]);
    const unpacker = new DiffRecordUnpacker();
    const arrived = [...unpacker.unpack(first), ...unpacker.unpack(second)];
    expect(new Set(arrived.map((r) => r.tools)).size).toBe(1);
  });
});
