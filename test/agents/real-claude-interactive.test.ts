/**
 * The real Claude Code as its users run it: interactive, at a terminal (util-linux's `script` gives
 * `record` a pseudo-terminal), in front of the mock. An interactive session sends what `claude -p`
 * does not: a session-title call on the main model, with no tools and a JSON-schema answer, before
 * the first turn. The test types two prompts (the second has the main agent start a subagent) and
 * `/exit`, each once the screen or the run shows the step before it done, never after a clock. The
 * run must name the title call a side call, keep the main conversation unbroken where the provider
 * would read from its cache, and call the subagent's first request a new conversation. Skipped with
 * one line without the install or without `script`.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { findNpmAgent } from "../../src/agents/npm-agents.js";
import type { RequestRecord } from "../../src/capture/types.js";
import { PROJECT_ROOT } from "../../src/project-root.js";
import { filesContaining, jsonl, MAIN, startCli } from "../capture/http-harness.js";
import { atTerminal, hasScript } from "../fixtures/at-terminal.js";
import { untilInFolder } from "../fixtures/watch-until.js";
import { removeTempDirs, tempDir } from "../runtime/harness.js";

afterEach(removeTempDirs);

const claude = findNpmAgent("claude-code");
if (!claude)
  console.log("real interactive Claude Code test skipped: not installed ('./run.sh agents install claude-code')");
else if (!hasScript) console.log("real interactive Claude Code test skipped: util-linux's script is not on PATH");

/** The screen as text: escape sequences and blanks dropped (the TUI moves the cursor between words). */
const plain = (screen: string) => stripVTControlCharacters(screen).replace(/\s/g, "");

/** The terminal, with `shows` (resolves once the screen holds a text) and `enter` (a line, then Enter). */
function claudeAtTerminal(command: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const terminal = atTerminal(command, cwd, env);
  const waiting: { text: string; found: () => void }[] = [];
  terminal.onOutput(() => {
    const now = plain(terminal.screen());
    for (const w of waiting.filter((w) => now.includes(w.text))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.found();
    }
  });
  const shows = (text: string) =>
    new Promise<void>((found) => {
      const wanted = text.replace(/\s/g, "");
      if (plain(terminal.screen()).includes(wanted)) found();
      else waiting.push({ text: wanted, found });
    });
  /** Types a line, and Enter once the screen shows it (Enter typed with it would read as a pasted newline). */
  const enter = async (line: string) => {
    terminal.type(line);
    await shows(line);
    terminal.type("\r");
  };
  return { shows, enter, done: terminal.done };
}

/** The records written so far to record's run (its folder while it captures, then the final one). */
function recordsIn(runs: string, name: string): RequestRecord[] {
  const live = readdirSync(runs).find((entry) => entry.startsWith(`.${name}.new-`));
  const file = join(runs, live ?? name, "requests.jsonl");
  return existsSync(file) ? jsonl<RequestRecord>(file) : [];
}

describe("the real Claude Code, interactive", () => {
  it.skipIf(!claude || !hasScript)(
    "a session with a title call and a subagent: the title call a side call, no break in the main conversation, the subagent's first request a new conversation",
    async () => {
      const home = tempDir("claude-tty-home-");
      const work = tempDir("claude-tty-work-");
      const runs = tempDir("claude-tty-runs-");
      const key = `sk-ant-payload-probe-test-${randomBytes(12).toString("hex")}`;
      // What a user has after the first start: onboarding done, the key approved, the folder trusted.
      writeFileSync(
        join(home, ".claude.json"),
        JSON.stringify({
          hasCompletedOnboarding: true,
          theme: "dark",
          customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
          projects: { [work]: { hasTrustDialogAccepted: true, allowedTools: [] } },
        }),
      );
      mkdirSync(join(home, "tmp"));
      const env = {
        PATH: "/usr/local/bin:/usr/bin:/bin",
        HOME: home,
        TMPDIR: join(home, "tmp"),
        LANG: "C.UTF-8",
        TZ: "UTC",
        TERM: "xterm-256color",
        ANTHROPIC_API_KEY: key,
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
      };
      const script = join(PROJECT_ROOT, "test/fixtures/interactive-subagent-session.yaml");
      const mock = await startCli(["mock", script, "--runs", runs]);
      const upstream = new URL(mock.url).origin;
      const record = [process.execPath, MAIN, "record", "--upstream", upstream, "--runs", runs, "--name", "tty"];
      // Accept-edits mode runs a subagent without asking (the default mode asks the provider's classifier).
      const agent = [claude!.program, "--permission-mode", "acceptEdits"];
      const terminal = claudeAtTerminal([...record, "--no-view", "--", ...agent], work, env);

      await terminal.shows("accept edits on");
      await terminal.enter("Say hello.");
      // The title call and the first turn, in either order, each answered with the title.
      await untilInFolder(runs, () => recordsIn(runs, "tty").length >= 2);
      await terminal.enter("Use the Agent tool once, then say hello.");
      // The turn calling Agent, the subagent's request, and the main agent's turns after it.
      await untilInFolder(runs, () => recordsIn(runs, "tty").some((r) => r.conversation?.role === "subagent"));
      await terminal.shows('Agent"Greet"finished');
      await untilInFolder(runs, () => recordsIn(runs, "tty").length >= 6);
      await terminal.enter("/exit");
      const { code, screen } = await terminal.done;
      expect(code, screen).toBe(0);
      expect(await mock.stop()).toBe(0);

      const records = jsonl<RequestRecord>(join(runs, "tty", "requests.jsonl"));
      const side = records.filter((r) => r.conversation?.role === "side");
      const main = records.filter((r) => r.conversation?.role === "main");
      const subagents = records.filter((r) => r.conversation?.role === "subagent");
      expect(side.length).toBeGreaterThanOrEqual(1);
      for (const title of side) expect(title).toMatchObject({ tools: [], prefix: { newConversation: true } });
      expect(main.length).toBeGreaterThanOrEqual(3);
      expect(new Set(main.map((r) => r.conversation!.id)).size).toBe(1);
      // Where the provider would read from its cache, the main conversation never breaks, and reads from itself.
      expect(main.map((r) => r.prefix?.breakDetail ?? null)).toEqual(main.map(() => null));
      const mainSeqs = new Set(main.map((r) => r.seq));
      for (const r of main.slice(1)) expect(mainSeqs.has(r.prefix!.from as number), `#${r.seq}`).toBe(true);
      expect(subagents[0]!.conversation).toMatchObject({ parent: main[0]!.conversation!.id });
      expect(subagents[0]!.prefix).toMatchObject({ newConversation: true, breakAt: null });
      // The report labels the title call side.
      const report = spawnSync(process.execPath, [MAIN, "report", join(runs, "tty"), "--json"], { encoding: "utf8" });
      expect(report.status, report.stderr).toBe(0);
      const rows = JSON.parse(report.stdout) as { seq: number; kind: string }[];
      expect(rows.filter((row) => row.kind === "side").map((row) => row.seq)).toEqual(side.map((r) => r.seq));
      expect(filesContaining(runs, key)).toEqual([]);
    },
    240_000,
  );
});
