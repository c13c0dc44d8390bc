import { describe, expect, it } from "vitest";
import { tableLook } from "../../src/cli/terminal.js";

const tty = { isTTY: true, columns: 132 };
const pipe = { isTTY: false };

describe("tableLook: how wide and whether in colour", () => {
  it("a terminal's own width wins over COLUMNS; a pipe takes COLUMNS, or no limit without it", () => {
    expect(tableLook(false, tty, { COLUMNS: "80" }).maxWidth).toBe(132);
    expect(tableLook(false, pipe, { COLUMNS: "80" }).maxWidth).toBe(80);
    expect(tableLook(false, pipe, {}).maxWidth).toBeNull();
    expect(tableLook(false, pipe, { COLUMNS: "wide" }).maxWidth).toBeNull();
    expect(tableLook(false, { isTTY: true }, {}).maxWidth).toBe(80);
  });

  it("--wide draws every cell whole, terminal or not", () => {
    expect(tableLook(true, tty, {}).maxWidth).toBeNull();
    expect(tableLook(true, pipe, { COLUMNS: "80" }).maxWidth).toBeNull();
  });

  it("colour on a terminal only, never with NO_COLOR, on any output with FORCE_COLOR (not 0 or false)", () => {
    expect(tableLook(false, tty, {}).colour).toBe(true);
    expect(tableLook(false, pipe, {}).colour).toBe(false);
    expect(tableLook(false, tty, { NO_COLOR: "1" }).colour).toBe(false);
    expect(tableLook(false, pipe, { FORCE_COLOR: "1" }).colour).toBe(true);
    expect(tableLook(false, pipe, { FORCE_COLOR: "1", NO_COLOR: "1" }).colour).toBe(false);
    expect(tableLook(false, tty, { FORCE_COLOR: "0" }).colour).toBe(false);
    expect(tableLook(false, tty, { FORCE_COLOR: "false" }).colour).toBe(false);
    // An empty NO_COLOR does not count (no-color.org).
    expect(tableLook(false, tty, { NO_COLOR: "" }).colour).toBe(true);
  });
});
