import { describe, expect, it } from "vitest";
import { fitHelp } from "../../src/cli/help-text.js";

const HELP = `Usage: payload-probe thing <run> [options]

Does the thing to a run, which is a long sentence that goes on past the edge of a narrow terminal
and on.
A sentence of its own.

  <run>         a run folder, a probe name with a folder under runs/, a run id from the database
                or <probe>@N
  --short       fits
  --redact-body REGEX
                  replace every match of REGEX in stored request and response bodies with [redacted]
  -h, --help    show this help`;

describe("fitHelp", () => {
  it("leaves a help that fits as it is", () => {
    expect(fitHelp(HELP, 120)).toBe(HELP);
  });

  it("fills paragraphs and descriptions anew to the width, an option's lines under its description", () => {
    expect(fitHelp(HELP, 60)).toBe(`Usage: payload-probe thing <run> [options]

Does the thing to a run, which is a long sentence that goes
on past the edge of a narrow terminal and on.
A sentence of its own.

  <run>         a run folder, a probe name with a folder
                under runs/, a run id from the database or
                <probe>@N
  --short       fits
  --redact-body REGEX
                  replace every match of REGEX in stored
                  request and response bodies with
                  [redacted]
  -h, --help    show this help`);
  });
});
