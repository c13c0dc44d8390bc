/**
 * DiffRecords packed for the trip from a worker thread to the main thread. Copying objects between
 * threads (structured clone) costs as much as parsing them, so a batch travels as one Float64Array
 * of numbers and one string of the texts (both copied in one piece), and values that repeat from
 * request to request (kind, probe, tool lists, markers, break places) are sent once and then
 * named by index. A record with anything unusual in it — a field of another type, a prefix with
 * other keys — travels as its JSON text instead, so every record arrives exactly as it left.
 */
import { type DiffRecord, shallowEqual } from "./diff-record.js";

export interface PackedBatch {
  count: number;
  numbers: Float64Array;
  /** The lengths of the texts in `text`, in order; -1 for a null. */
  lengths: Int32Array;
  text: string;
  /** Values first seen in this batch, to append to the receiver's table. */
  values: unknown[];
}

/** The numbers of one record: its row in `numbers`. */
const FIELD = {
  seq: 0,
  kind: 1,
  probe: 2,
  tools: 3,
  markers: 4,
  userMessages: 5,
  bytesTools: 6,
  bytesSystem: 7,
  bytesMessages: 8,
  bytesBody: 9,
  hasTokens: 10,
  tokensTools: 11,
  tokensSystem: 12,
  tokensMessages: 13,
  tokensTotal: 14,
  prefix: 15,
  sharedBytes: 16,
  sharedTokens: 17,
  breakAt: 18,
} as const;
const FIELDS = Object.keys(FIELD).length;
/** FIELD.kind of a record sent as JSON. */
const AS_JSON = -1;
/** FIELD.prefix: none, or the capture's prefix without or with sharedTokens. */
const NO_PREFIX = 0;
const PREFIX_KEYS = ["sharedBytes", "breakAt", "breakDetail"];
const PREFIX_KEYS_TOKENS = [...PREFIX_KEYS, "sharedTokens"];

const isNumber = (value: unknown): value is number => typeof value === "number";
const isText = (value: unknown): value is string => typeof value === "string";
const sameKeys = (value: object, keys: string[]) => {
  const own = Object.keys(value);
  return own.length === keys.length && own.every((key, i) => key === keys[i]);
};

/** Which prefix form a record's prefix has (0 none, 1 or 2 the keys above), or null for any other. */
function prefixForm(prefix: DiffRecord["prefix"]): number | null {
  if (prefix === null) return NO_PREFIX;
  const p = prefix as unknown as Record<string, unknown>;
  if (
    typeof p !== "object" ||
    !isNumber(p.sharedBytes) ||
    !(p.breakAt === null || isText(p.breakAt)) ||
    !(p.breakDetail === null || isText(p.breakDetail))
  )
    return null;
  if (sameKeys(p, PREFIX_KEYS)) return 1;
  return sameKeys(p, PREFIX_KEYS_TOKENS) && isNumber(p.sharedTokens) ? 2 : null;
}

function packable(r: DiffRecord): boolean {
  const t = r.tokens;
  return (
    [r.seq, r.userMessages, r.bytes.tools, r.bytes.system, r.bytes.messages, r.bytes.body].every(isNumber) &&
    (t === null || [t.tools, t.system, t.messages, t.total].every(isNumber)) &&
    [r.roles, r.prefixSummary, r.hashes.tools, r.hashes.system, r.hashes.body].every(isText) &&
    prefixForm(r.prefix) !== null
  );
}

/** The sender's side: remembers which repeating values the receiver already has. */
export class DiffRecordPacker {
  private readonly known = new Map<string, number>();
  /** The last value of each field and its index: consecutive requests mostly repeat it. */
  private readonly last = new Map<string, { value: unknown; id: number }>();

  pack(records: DiffRecord[]): PackedBatch {
    const numbers = new Float64Array(records.length * FIELDS);
    const texts: (string | null)[] = [];
    const values: unknown[] = [];
    const id = (field: string, value: unknown): number => {
      const previous = this.last.get(field);
      if (previous && shallowEqual(previous.value, value)) return previous.id;
      const key = JSON.stringify(value) ?? "undefined";
      let found = this.known.get(key);
      if (found === undefined) {
        found = this.known.size;
        this.known.set(key, found);
        values.push(value);
      }
      this.last.set(field, { value, id: found });
      return found;
    };
    records.forEach((r, i) => {
      const row = i * FIELDS;
      if (!packable(r)) {
        numbers[row + FIELD.kind] = AS_JSON;
        texts.push(JSON.stringify(r));
        return;
      }
      const t = r.tokens;
      const p = r.prefix as (DiffRecord["prefix"] & { sharedTokens?: number }) | null;
      numbers.set(
        [
          r.seq,
          id("kind", r.kind),
          id("probe", r.probe),
          id("tools", r.tools),
          id("markers", r.markers),
          r.userMessages,
          r.bytes.tools,
          r.bytes.system,
          r.bytes.messages,
          r.bytes.body,
          t ? 1 : 0,
          t?.tools ?? 0,
          t?.system ?? 0,
          t?.messages ?? 0,
          t?.total ?? 0,
          prefixForm(p)!,
          p?.sharedBytes ?? 0,
          p?.sharedTokens ?? 0,
          p ? id("breakAt", p.breakAt) : 0,
        ],
        row,
      );
      texts.push(r.roles, r.prefixSummary, r.hashes.tools, r.hashes.system, r.hashes.body, p ? p.breakDetail : null);
    });
    const lengths = Int32Array.from(texts, (text) => (text === null ? -1 : text.length));
    return { count: records.length, numbers, lengths, text: texts.join(""), values };
  }
}

/** The receiver's side: the repeating values received so far, shared by the records it makes. */
export class DiffRecordUnpacker {
  private readonly values: unknown[] = [];

  unpack(batch: PackedBatch): DiffRecord[] {
    this.values.push(...batch.values);
    const { numbers: n, lengths, text } = batch;
    const v = this.values;
    let slot = 0;
    let at = 0;
    const next = (): string | null => {
      const length = lengths[slot++]!;
      if (length < 0) return null;
      at += length;
      return text.slice(at - length, at);
    };
    const records: DiffRecord[] = [];
    for (let row = 0; row < batch.count * FIELDS; row += FIELDS) {
      const f = (field: keyof typeof FIELD) => n[row + FIELD[field]]!;
      if (f("kind") === AS_JSON) {
        records.push(JSON.parse(next()!) as DiffRecord);
        continue;
      }
      const roles = next()!;
      const prefixSummary = next()!;
      const hashes = { tools: next()!, system: next()!, body: next()! };
      const breakDetail = next();
      const form = f("prefix");
      const breakAt = v[f("breakAt")] as NonNullable<DiffRecord["prefix"]>["breakAt"];
      const prefix =
        form === NO_PREFIX
          ? null
          : form === 1
            ? { sharedBytes: f("sharedBytes"), breakAt, breakDetail }
            : { sharedBytes: f("sharedBytes"), breakAt, breakDetail, sharedTokens: f("sharedTokens") };
      records.push({
        seq: f("seq"),
        kind: v[f("kind")] as DiffRecord["kind"],
        probe: v[f("probe")] as string,
        tools: v[f("tools")] as string[],
        roles,
        userMessages: f("userMessages"),
        markers: v[f("markers")] as Record<string, number>,
        bytes: { tools: f("bytesTools"), system: f("bytesSystem"), messages: f("bytesMessages"), body: f("bytesBody") },
        tokens: f("hasTokens")
          ? {
              tools: f("tokensTools"),
              system: f("tokensSystem"),
              messages: f("tokensMessages"),
              total: f("tokensTotal"),
            }
          : null,
        prefix,
        prefixSummary,
        hashes,
      });
    }
    return records;
  }
}
