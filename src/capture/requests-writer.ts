/**
 * The one writer of a run's requests.jsonl, and of its index (run-index.ts) row by row after each
 * record's line. The index is derived: when it cannot be kept in step with the records (it would
 * start partway through an existing requests.jsonl, or a write of it failed) it is stopped where it
 * is, and readers read the records it lacks from requests.jsonl.
 */
import { existsSync, statSync } from "node:fs";
import { StorageError } from "../errors.js";
import { JsonlWriter } from "../files/jsonl.js";
import { RolesEncoder } from "./record-roles.js";
import { runFiles } from "./run-format.js";
import { INDEX_HEADER, indexRowEncoder } from "./run-index.js";
import type { RequestRecord } from "./types.js";

export class RequestsWriter {
  private readonly records: JsonlWriter;
  private index: JsonlWriter | null = null;
  private readonly encode = indexRowEncoder();
  private readonly roles = new RolesEncoder();
  /** The size of requests.jsonl after the last line written. */
  private end: number;

  constructor(dir: string) {
    const files = runFiles(dir);
    this.records = new JsonlWriter(files.requests);
    this.end = statSync(files.requests).size;
    // An index covers its file from the first byte: a capture that appends to records written
    // before it (or beside an index of other records) writes none.
    if (this.end === 0 && !(existsSync(files.index) && statSync(files.index).size > 0))
      this.indexed(() => {
        this.index = new JsonlWriter(files.index);
        this.index.write(INDEX_HEADER);
      });
  }

  /** Writes the record's line (its roles a reference where they repeat, record-roles.ts) and returns it. */
  write(record: RequestRecord): string {
    const { json, base } = this.roles.encode(record);
    try {
      this.records.writeLine(json);
    } catch (error) {
      // What part of the line reached the file is unknown, so no later offset would be right.
      this.stopIndex();
      throw error;
    }
    this.end += Buffer.byteLength(json) + 1;
    if (base) this.roles.written(record, this.end);
    this.indexed(() => this.index?.writeLine(this.encode(record, this.end)));
    return json;
  }

  /** A write of the index that fails stops the index there; the records are what the run keeps. */
  private indexed(write: () => void): void {
    try {
      write();
    } catch (error) {
      if (!(error instanceof StorageError)) throw error;
      this.stopIndex();
    }
  }

  private stopIndex(): void {
    this.index?.close();
    this.index = null;
  }

  /** The first failed write of requests.jsonl (the index's failures cost only speed). */
  get failure(): StorageError | null {
    return this.records.failure;
  }

  close(): void {
    this.records.close();
    this.index?.close();
  }
}
