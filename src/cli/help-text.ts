/**
 * Help texts fitted to the terminal. Each command writes its help as it reads best wide; printed, a
 * paragraph or an option's description with a line wider than the terminal (80 columns at most) is
 * filled anew to that width, an option's lines under its description column, so no help runs past
 * the edge and a help added later needs no hand wrapping. Blocks that fit are printed as written.
 */
import { terminalWidth } from "../text/terminal-width.js";
import { displayWidth, wrapLine } from "../text/text-wrap.js";

/** Help reads best at no more than this, however wide the terminal. */
const HELP_WIDTH = 80;

/** An option or command line: two spaces, its name, two or more spaces, what it does. */
const ENTRY = /^( {2}\S+(?: \S+)*? {2,})(\S.*)$/;

/**
 * A run of lines filled as one: `head` printed as it is (an option whose description starts on the
 * next line), then `text` from `prefix` on, carrying on at column `hang`.
 */
interface Block {
  head: string | null;
  prefix: string;
  hang: number;
  lines: string[];
  text: string[];
}

/**
 * The blocks of a help text: a paragraph (lines from the first column, until one ends a sentence),
 * an option with its continuation lines, a blank line.
 */
function blocks(help: string): Block[] {
  const found: Block[] = [];
  const start = (line: string, block: Omit<Block, "lines">) => found.push({ ...block, lines: [line] });
  for (const line of help.split("\n")) {
    const current = found.at(-1);
    const indent = line.length - line.trimStart().length;
    const entry = ENTRY.exec(line);
    if (line.trim() === "") start(line, { head: line, prefix: "", hang: 0, text: [] });
    else if (indent === 0) {
      // A line after one that ended a sentence starts a paragraph of its own, as the writer broke it.
      if (current?.hang === 0 && current.head === null && !/[.:]$/.test(current.lines.at(-1)!)) {
        current.lines.push(line);
        current.text.push(line);
      } else start(line, { head: null, prefix: "", hang: 0, text: [line] });
    } else if (indent > 2 && current && current.head?.trim() !== "") {
      if (current.text.length === 0) {
        current.prefix = " ".repeat(indent);
        current.hang = indent;
      }
      current.lines.push(line);
      current.text.push(line.trim());
    } else if (entry) start(line, { head: null, prefix: entry[1]!, hang: entry[1]!.length, text: [entry[2]!] });
    else start(line, { head: line, prefix: "", hang: indent + 2, text: [] });
  }
  return found;
}

/** `help` with every block that has a line wider than `width` filled anew to it. */
export function fitHelp(help: string, width: number): string {
  const out: string[] = [];
  for (const block of blocks(help)) {
    if (block.lines.every((line) => displayWidth(line) <= width)) {
      out.push(...block.lines);
      continue;
    }
    if (block.head !== null) out.push(block.head);
    if (block.text.length > 0) out.push(...wrapLine(block.prefix + block.text.join(" "), width, block.hang, true));
  }
  return out.join("\n");
}

/** The help as printed: fitted to the terminal, or to 80 columns where it is wider or unknown. */
export function printHelp(help: string): void {
  const terminal = terminalWidth() ?? HELP_WIDTH;
  console.log(fitHelp(help, Math.min(HELP_WIDTH, terminal)));
}
