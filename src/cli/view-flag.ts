/**
 * `--view` and `--no-view` as the capture commands (proxy, mock, record) take them: their help lines,
 * options and meaning. The viewer they start is analysis/view/live-view.ts.
 */
import { usageError } from "./args.js";

/** `--view` for a command where the viewer is off unless asked (proxy, mock): its --help lines. */
export const VIEW_FLAG_HELP = `  --view        also serve the run's viewer on 127.0.0.1 while it records (the
                page 'view' writes, updated as requests arrive); its address is
                the line after LISTENING: VIEW http://127.0.0.1:N/`;

/** `--view` and `--no-view` for a command where the viewer is on when stdout is a terminal (record). */
export const VIEW_SWITCH_HELP = `  --view, --no-view
                serve the run's viewer on 127.0.0.1 while it records (the page
                'view' writes, updated as requests arrive), or not; default:
                served when stdout is a terminal. Its address is said on stderr
                before the command starts: VIEW http://127.0.0.1:N/`;

/** The parseCommand options of each: `VIEW_OPTION` with VIEW_FLAG_HELP, `VIEW_SWITCH_OPTIONS` with VIEW_SWITCH_HELP. */
export const VIEW_OPTION = { view: { type: "boolean" } } as const;
export const VIEW_SWITCH_OPTIONS = { view: { type: "boolean" }, "no-view": { type: "boolean" } } as const;

/**
 * Whether to serve the viewer: `--view` or `--no-view` when given (both is a usage error), else
 * `byDefault` (record: `process.stdout.isTTY === true`; proxy and mock: false).
 */
export function liveViewFlag(
  command: string,
  values: { view?: boolean; "no-view"?: boolean },
  byDefault: boolean,
): boolean {
  if (values.view && values["no-view"]) throw usageError(command, "--view and --no-view contradict each other");
  if (values.view) return true;
  if (values["no-view"]) return false;
  return byDefault;
}
