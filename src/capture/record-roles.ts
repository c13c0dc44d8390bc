/**
 * A record's roles as requests.jsonl and the database store them: whole, or, where a long list
 * repeats most of an earlier record's, as a reference to that record and the roles after what they
 * share.
 *
 * `roles` names every message's role, so in a session that sends its whole conversation each
 * request it grows with the conversation and the file with its square (33 of 34 MB of a
 * 1,792-request session's requests.jsonl). A record whose list has REFERENCED_ROLES_MIN roles or
 * more, and shares at least half of them with one of the BASES_KEPT latest records written with
 * their roles whole, stores `"roles":{"base":S,"end":E,"keep":K,"add":[…]}`: the first K roles of
 * record S (whose line ends at byte E of requests.jsonl), then `add`. A base serves at most
 * BASE_USES_MAX records; then a record is written whole again and becomes a base. So a reference is
 * one hop to a record written whole, read from memory while reading in order, or by its offset
 * (folder) or seq (database) when a reader starts partway. Shorter lists, a probe's, stay whole, so
 * those records are as they were.
 */
import { leadingMatch } from "./leading-match.js";
import type { RequestRecord } from "./types.js";

/** Lists shorter than this stay whole: a reference (about 40 bytes) saves little on a short list. */
export const REFERENCED_ROLES_MIN = 64;
/** Records a base serves before a record is written whole again: it bounds what a reference adds. */
export const BASE_USES_MAX = 64;
/** Records with whole roles a writer refers to (and a reader keeps): a main conversation and its side requests. */
const BASES_KEPT = 4;

export interface RolesReference {
  base: number;
  end: number;
  keep: number;
  add: string[];
}

/** A record as stored: its roles whole or a reference. */
export type StoredRecord = Omit<RequestRecord, "roles"> & { roles: string[] | RolesReference };

export function isRolesReference(value: unknown): value is RolesReference {
  const r = value as RolesReference;
  return (
    typeof r === "object" &&
    r !== null &&
    !Array.isArray(r) &&
    Number.isInteger(r.base) &&
    Number.isInteger(r.end) &&
    Number.isInteger(r.keep) &&
    r.keep >= 0 &&
    Array.isArray(r.add)
  );
}

interface Base {
  seq: number;
  end: number;
  roles: readonly string[];
  uses: number;
}

/** One per requests.jsonl writer: which records it wrote whole, to refer to. */
export class RolesEncoder {
  private readonly bases: Base[] = [];

  /** The record's line as stored; `base`: it is written whole and long, so later records may refer to it. */
  encode(record: RequestRecord): { json: string; base: boolean } {
    const { roles } = record;
    if (roles.length < REFERENCED_ROLES_MIN) return { json: JSON.stringify(record), base: false };
    let best: Base | null = null;
    let kept = 0;
    for (const base of this.bases) {
      const keep = leadingMatch(base.roles, roles);
      if (keep > kept && base.uses < BASE_USES_MAX) [best, kept] = [base, keep];
    }
    if (best === null || kept * 2 < roles.length) return { json: JSON.stringify(record), base: true };
    best.uses++;
    const reference: RolesReference = { base: best.seq, end: best.end, keep: kept, add: roles.slice(kept) };
    return { json: JSON.stringify({ ...record, roles: reference }), base: false };
  }

  /** A record `encode` called a base, written: its line ends at byte `end`. */
  written(record: RequestRecord, end: number): void {
    this.bases.push({ seq: record.seq, end, roles: record.roles, uses: 0 });
    if (this.bases.length > BASES_KEPT) this.bases.shift();
  }
}

/**
 * The reading side: a stored record's roles whole again. Bases are kept as records go by, in
 * order; one not seen (a reader that started partway) is read by `readBase`, which gives the stored
 * record the reference names, or null. A reference that resolves to nothing is `problem`.
 */
export class RolesResolver {
  private readonly bases: { seq: number; roles: string[] }[] = [];

  constructor(
    private readonly readBase: (reference: RolesReference) => StoredRecord | null,
    private readonly problem: (seq: number, what: string) => Error,
  ) {}

  resolve(stored: StoredRecord): RequestRecord {
    if (!isRolesReference(stored.roles)) {
      if (stored.roles.length >= REFERENCED_ROLES_MIN) {
        this.bases.push({ seq: stored.seq, roles: stored.roles });
        if (this.bases.length > BASES_KEPT) this.bases.shift();
      }
      return stored as RequestRecord;
    }
    const reference = stored.roles;
    const base = this.baseRoles(reference);
    if (base === null || base.length < reference.keep)
      throw this.problem(
        stored.seq,
        `its roles refer to record ${reference.base} (line ending at byte ${reference.end}), which has no ${reference.keep} roles written whole`,
      );
    return { ...stored, roles: base.slice(0, reference.keep).concat(reference.add) };
  }

  private baseRoles(reference: RolesReference): readonly string[] | null {
    for (let i = this.bases.length - 1; i >= 0; i--)
      if (this.bases[i]!.seq === reference.base) return this.bases[i]!.roles;
    const record = this.readBase(reference);
    return record !== null && record.seq === reference.base && Array.isArray(record.roles) ? record.roles : null;
  }
}
