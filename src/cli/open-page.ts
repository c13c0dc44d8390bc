import { spawn, spawnSync } from "node:child_process";

/**
 * Opens a page (a file or an http address) in the user's browser with xdg-open, left running on its
 * own; where there is no xdg-open, `tell` says where the page is instead.
 */
export function openPage(target: string, tell: (line: string) => void = console.log): void {
  const found = spawnSync("/bin/sh", ["-c", "command -v xdg-open"], { encoding: "utf8" });
  if (found.status !== 0) {
    tell(`no xdg-open here: open ${target} in a browser`);
    return;
  }
  spawn("xdg-open", [target], { detached: true, stdio: "ignore" }).unref();
}
