/**
 * JSON with comments (`//`, `/* *\/`) and trailing commas, as MCP config files are written by hand.
 * A parser rather than a comment stripper in front of `JSON.parse`, because `JSON.parse` does not
 * report where the text went wrong for every kind of mistake, and users need a line and column.
 */

export class JsoncSyntaxError extends Error {
  constructor(
    readonly reason: string,
    /** Zero-based offset into the text. */
    readonly offset: number,
    /** One-based. */
    readonly line: number,
    /** One-based, in UTF-16 code units. */
    readonly column: number,
  ) {
    super(`${reason} at line ${line} column ${column}`);
    this.name = "JsoncSyntaxError";
  }
}

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

/** Parses JSONC text into plain values; object keys keep the order they first appear in. */
export function parseJsonc(text: string): unknown {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const parser = new Parser(source);
  parser.skipTrivia();
  const value = parser.parseValue();
  parser.skipTrivia();
  if (!parser.atEnd()) parser.fail("unexpected text after the JSON value");
  return value;
}

class Parser {
  private pos = 0;

  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  fail(reason: string, at = this.pos): never {
    const before = this.text.slice(0, at);
    const line = before.split("\n").length;
    const column = at - (before.lastIndexOf("\n") + 1) + 1;
    throw new JsoncSyntaxError(reason, at, line, column);
  }

  /** Whitespace and comments, which may appear between any two tokens. */
  skipTrivia(): void {
    const text = this.text;
    while (this.pos < text.length) {
      const ch = text[this.pos]!;
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
        this.pos++;
      } else if (text.startsWith("//", this.pos)) {
        const end = text.indexOf("\n", this.pos);
        this.pos = end === -1 ? text.length : end + 1;
      } else if (text.startsWith("/*", this.pos)) {
        const end = text.indexOf("*/", this.pos + 2);
        if (end === -1) this.fail("unterminated block comment");
        this.pos = end + 2;
      } else {
        return;
      }
    }
  }

  parseValue(): unknown {
    const ch = this.text[this.pos];
    if (ch === "{") return this.parseObject();
    if (ch === "[") return this.parseArray();
    if (ch === '"') return this.parseString();
    if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) return this.parseNumber();
    for (const [word, value] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    this.fail(ch === undefined ? "unexpected end of input" : `unexpected character ${JSON.stringify(ch)}`);
  }

  private parseObject(): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    this.pos++; // {
    this.skipTrivia();
    while (this.text[this.pos] !== "}") {
      if (this.text[this.pos] !== '"') this.fail("expected a property name in double quotes or '}'");
      const key = this.parseString();
      this.skipTrivia();
      if (this.text[this.pos] !== ":") this.fail("expected ':' after the property name");
      this.pos++;
      this.skipTrivia();
      // Defined rather than assigned so a key named "__proto__" stays an ordinary property, as with JSON.parse.
      Object.defineProperty(result, key, {
        value: this.parseValue(),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.skipTrivia();
      if (this.text[this.pos] === ",") {
        this.pos++;
        this.skipTrivia();
      } else if (this.text[this.pos] !== "}") {
        this.fail("expected ',' or '}' after the property value");
      }
    }
    this.pos++; // }
    return result;
  }

  private parseArray(): unknown[] {
    const result: unknown[] = [];
    this.pos++; // [
    this.skipTrivia();
    while (this.text[this.pos] !== "]") {
      if (this.atEnd()) this.fail("unexpected end of input inside an array");
      result.push(this.parseValue());
      this.skipTrivia();
      if (this.text[this.pos] === ",") {
        this.pos++;
        this.skipTrivia();
      } else if (this.text[this.pos] !== "]") {
        this.fail("expected ',' or ']' after the array element");
      }
    }
    this.pos++; // ]
    return result;
  }

  private parseString(): string {
    const start = this.pos;
    this.pos++; // opening quote
    let result = "";
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === undefined) this.fail("unterminated string", start);
      if (ch === '"') break;
      if (ch < " ") this.fail("control character inside a string");
      if (ch !== "\\") {
        result += ch;
        this.pos++;
        continue;
      }
      const escaped = this.text[this.pos + 1];
      if (escaped === "u") {
        const hex = this.text.slice(this.pos + 2, this.pos + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("invalid \\u escape");
        result += String.fromCharCode(parseInt(hex, 16));
        this.pos += 6;
      } else if (escaped !== undefined && Object.hasOwn(ESCAPES, escaped)) {
        result += ESCAPES[escaped];
        this.pos += 2;
      } else {
        this.fail("invalid escape sequence");
      }
    }
    this.pos++; // closing quote
    return result;
  }

  private parseNumber(): number {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match) this.fail("invalid number");
    this.pos += match[0].length;
    return Number(match[0]);
  }
}
