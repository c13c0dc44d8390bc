/** `--view` and `--no-view` as proxy, mock and record read them (src/cli/view-flag.ts). */
import { describe, expect, it } from "vitest";
import { liveViewFlag, VIEW_OPTION, VIEW_SWITCH_OPTIONS } from "../../src/cli/view-flag.js";
import { UserError } from "../../src/errors.js";

describe("--view and --no-view", () => {
  it("take the default unless given; both at once is a usage error", () => {
    expect(Object.keys(VIEW_OPTION)).toEqual(["view"]);
    expect(Object.keys(VIEW_SWITCH_OPTIONS)).toEqual(["view", "no-view"]);
    expect(liveViewFlag("record", {}, true)).toBe(true);
    expect(liveViewFlag("record", {}, false)).toBe(false);
    expect(liveViewFlag("record", { view: true }, false)).toBe(true);
    expect(liveViewFlag("record", { "no-view": true }, true)).toBe(false);
    expect(() => liveViewFlag("record", { view: true, "no-view": true }, true)).toThrow(UserError);
    expect(() => liveViewFlag("record", { view: true, "no-view": true }, true)).toThrow(
      /^record: --view and --no-view contradict each other\. See '.+ record --help'\.$/,
    );
  });
});
