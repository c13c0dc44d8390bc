/**
 * Captured text made safe to print on a terminal. A captured system prompt, tool result or model
 * name is whatever an agent or a provider sent; printed raw, `ESC]0;…BEL` retitles the window,
 * `ESC[2J` clears it, and a bidi override reorders what the reader sees. Each such character is
 * shown as its escape instead: C0 controls as `\x1b`, DEL, C1 controls (U+0080–U+009F, which
 * some terminals obey like ESC sequences) and the bidi embeddings, overrides and isolates as
 * `\u009b`. The `\u` form is also JSON's, so a JSON line passed through keeps its meaning.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const IN_A_LINE = /[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;
/** The same, but line breaks and tabs, which multi-line texts are made of, print as themselves. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const IN_LINES = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

function escaped(char: string): string {
  const code = char.charCodeAt(0);
  const hex = code.toString(16).padStart(code < 0x20 ? 2 : 4, "0");
  return code < 0x20 ? `\\x${hex}` : `\\u${hex}`;
}

/**
 * `text` with every control and bidi-override character shown as its escape; with `lines`, newline
 * and tab are kept, for texts meant to print on several lines.
 */
export function printable(text: string, { lines = false }: { lines?: boolean } = {}): string {
  return text.replace(lines ? IN_LINES : IN_A_LINE, escaped);
}
