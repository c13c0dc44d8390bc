/**
 * Imported for its effect, by every process that parses with zod (the CLI's input validation, the
 * MCP SDK's messages in the CLI and in the stub servers). zod compiles a fast path for each object
 * schema with `new Function` at its first parse; a process that lives for one probe run parses each
 * schema a handful of times, so that compiling cost more than it saved (about 30 ms of a 0.4 s
 * `run p1`), and V8's code cache cannot keep code made by `new Function`. Results and error
 * messages are the same either way: zod only takes the fast path when the input is valid.
 */
import { config } from "zod/v4/core";

config({ jitless: true });
