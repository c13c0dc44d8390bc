import { fileURLToPath } from "node:url";

/**
 * The checkout this code runs from (the folder holding `probes/`, `profiles/`, `runs/`). Resolved from
 * this module's own place, `src/` or `dist/` directly under the root, so it does not depend on the cwd.
 */
export const PROJECT_ROOT = fileURLToPath(new URL("../", import.meta.url));
