import { UserError } from "../errors.js";

/** `--port N`: 0 (the default) picks a free port. */
export function parsePort(command: string, value: string | undefined): number {
  if (value === undefined) return 0;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UserError(`${command}: --port expected a number from 0 to 65535, got "${value}"`);
  return port;
}

/** Resolves with 0 at the first SIGINT or SIGTERM (the capture session then closes, so nothing captured is lost). */
export function untilSignal(): Promise<number> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
