/**
 * The two failures a user is meant to see without a stack trace. Anything else that escapes
 * is a bug in payload-probe and keeps its stack.
 */

/** Bad input: a probe, config, skill file or trace that cannot be used. The CLI exits 2. */
export class UserError extends Error {
  readonly code = "E_USER_INPUT";
  constructor(
    message: string,
    /** The file the bad input came from, when there is one. */
    readonly file?: string,
    /** The field inside that file, as a dotted path (`expect.requests[2].tools`). */
    readonly field?: string,
  ) {
    super(message);
    this.name = "UserError";
  }
}

/**
 * A file or database payload-probe must read or write cannot be used: locked, damaged, full or
 * read-only. Not a bug, and nothing the user typed was wrong, but like bad input it is the user's to
 * fix, so the CLI says it in one line and exits 2 (`storageError` in src/files/storage-error.ts builds it).
 */
export class StorageError extends UserError {
  constructor(message: string, file: string) {
    super(message, file);
    this.name = "StorageError";
  }
}

/** A check that ran and did not hold (a probe's expect block, a token budget). The CLI exits 1. */
export class CheckFailed extends Error {
  readonly code = "E_CHECK_FAILED";
  constructor(
    message: string,
    readonly failures: string[] = [],
  ) {
    super(message);
    this.name = "CheckFailed";
  }
}

/** One sentence naming where bad input is and what was expected. */
export function inputError(file: string, field: string | undefined, expected: string): UserError {
  const where = field ? `${file}: field "${field}"` : file;
  return new UserError(`${where}: ${expected}`, file, field);
}
