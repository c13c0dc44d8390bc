/**
 * A wire body's exact text again from its frame (view-data.ts: the body with a hole where each
 * segment goes, runs of equal holes written once, holes for stored pieces) and its segments' texts.
 */
import type { ItemOf } from "../types.js";

/** A request's segments as the body holds them: tool JSON, system parts' texts, message JSON, in order. */
export interface BodyTexts {
  tools: readonly string[];
  system: readonly string[];
  messages: readonly string[];
}

/** A frame's runs of equal holes (U+0002, a count, U+0002, the hole and the text after it) written out. */
function expandRuns(frame: string): string {
  const pieces = frame.split("\u0002");
  let text = pieces[0]!;
  for (let i = 1; i + 1 < pieces.length; i += 2) {
    const rest = pieces[i + 1]!;
    const next = rest.indexOf("\u0000", 1);
    const unit = next < 0 ? rest : rest.slice(0, next);
    text += unit.repeat(Number(pieces[i])) + rest.slice(unit.length);
  }
  return text;
}

/** The frame with each stored piece's hole (`P`) replaced by the piece's text, the frame's list in order. */
function withPieces(frame: string, ids: readonly number[], piece: (id: number) => string): string {
  if (ids.length === 0) return frame;
  let next = 0;
  return frame
    .split("\u0000")
    .map((unit, i) => (i > 0 && unit[0] === "P" ? piece(ids[next++]!) + unit.slice(1) : i > 0 ? `\u0000${unit}` : unit))
    .join("");
}

/**
 * The body's text: each U+0000 in the frame is followed by the letter of the segment kind that goes
 * there (T, S, M), or its lower case for a segment whose text is already there (taken, not written).
 */
export function rebuildBody(frame: ItemOf<"frame">, piece: (id: number) => string, texts: BodyTexts): string {
  const next = { t: 0, s: 0, m: 0 };
  const fill = (code: string) => {
    const kind = code.toLowerCase() as keyof typeof next;
    const text =
      kind === "t"
        ? texts.tools[next.t++]!
        : kind === "s"
          ? JSON.stringify(texts.system[next.s++])
          : texts.messages[next.m++]!;
    return code === kind ? "" : text;
  };
  const [head, ...units] = withPieces(expandRuns(frame[1]), frame[2] ?? [], piece).split("\u0000");
  let text = head!;
  for (const unit of units) text += fill(unit[0]!) + unit.slice(1);
  return text;
}
