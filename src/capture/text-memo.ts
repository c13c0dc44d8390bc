import { hash } from "node:crypto";

/** V8 hashes a string longer than this by its length alone. */
const V8_FULLY_HASHED_CHARS = 16_383;

/**
 * A value worked out once per distinct text, for texts that come back again and again (every request
 * of a run sends the history again), holding at most `maxChars` characters of texts: past that it
 * starts afresh. As Map keys, long texts of one length would each be compared with all the others, so
 * they are keyed by their digest instead.
 */
export class TextMemo<T = number> {
  private readonly short = new Map<string, T>();
  private readonly long = new Map<string, T>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  get(text: string, work: (text: string) => T): T {
    const [map, key] =
      text.length <= V8_FULLY_HASHED_CHARS ? [this.short, text] : [this.long, hash("sha256", text, "hex")];
    const known = map.get(key);
    if (known !== undefined) return known;
    const n = work(text);
    if (this.chars + text.length > this.maxChars) {
      this.short.clear();
      this.long.clear();
      this.chars = 0;
    }
    map.set(key, n);
    this.chars += text.length;
    return n;
  }
}
