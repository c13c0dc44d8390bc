import { StorageError } from "../errors.js";

/**
 * SQLite's primary result codes (sqlite.org/rescode.html; better-sqlite3 puts the extended code in
 * `code`, `SQLITE_IOERR_WRITE` and the like, so they are matched by prefix) and Node's errno codes,
 * each with what it means for the file and what the user can do about it.
 */
const MEANINGS: [code: string, meaning: string][] = [
  [
    "SQLITE_BUSY",
    "another process holds its write lock and kept it past the wait (PAYLOAD_PROBE_DB_WAIT seconds, 5 by default); let that process finish (or close the program that has it open) and run again",
  ],
  ["SQLITE_LOCKED", "another connection holds a lock on it; let it finish and run again"],
  [
    "SQLITE_CORRUPT",
    "expected a payload-probe SQLite database, but it is damaged; move it aside (a new one is made) or pass --no-db",
  ],
  [
    "SQLITE_NOTADB",
    "expected a payload-probe SQLite database, but it is not one; move it aside (a new one is made) or pass --no-db",
  ],
  ["SQLITE_FULL", "the disk (or the database's size limit) is full; free space and run again"],
  [
    "SQLITE_READONLY",
    "it cannot be written (read-only file or filesystem); make it writable, or pass --runs to another folder",
  ],
  [
    "SQLITE_CANTOPEN",
    "it cannot be opened (a missing, read-only or inaccessible folder); check the folder and its permissions",
  ],
  ["SQLITE_IOERR", "the disk reported an I/O error; check the disk and free space, then run again"],
  ["SQLITE_PERM", "access is denied; check its permissions"],
  ["ENOSPC", "the disk is full; free space and run again"],
  ["EDQUOT", "the disk quota is used up; free space and run again"],
  ["EROFS", "it is on a read-only filesystem; pass --runs to a writable folder"],
  ["EACCES", "access is denied; check its permissions, or pass --runs to another folder"],
  ["EPERM", "the operation is not permitted (an immutable or protected file?); check its attributes and permissions"],
  ["EIO", "the disk reported an I/O error; check the disk, then run again"],
];

/**
 * The failure of a file or database operation as one line naming the file, what went wrong and what
 * to do; null when the error is none of those (a bug, which keeps its stack).
 */
export function storageError(file: string, error: unknown): StorageError | null {
  if (error instanceof StorageError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  const meaning = MEANINGS.find(([known]) => code === known || code.startsWith(`${known}_`))?.[1];
  if (meaning === undefined) return null;
  // Node's messages begin with the code already (`EROFS: read-only file system, open …`), SQLite's do not.
  const message = (error as Error).message;
  return new StorageError(`${file}: ${meaning} (${message.startsWith(code) ? message : `${code}: ${message}`})`, file);
}

/** Runs `work`, turning a storage failure into a StorageError naming `file`; anything else is rethrown as it is. */
export function asStorageError<T>(file: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw storageError(file, error) ?? error;
  }
}

/** What keeps the first of its writes that failed: its file is then known to be incomplete. */
export interface FailureKeeper {
  failure: StorageError | null;
}

/** `asStorageError` for a write of `keeper`'s: the first storage failure is also kept in `keeper.failure`. */
export function keepingFailure<T>(keeper: FailureKeeper, file: string, work: () => T): T {
  try {
    return asStorageError(file, work);
  } catch (error) {
    if (error instanceof StorageError) keeper.failure ??= error;
    throw error;
  }
}
