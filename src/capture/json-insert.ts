/**
 * Adding one member to a JSON object's text without rewriting the rest: the bytes before and after
 * the insertion stay as they were, so nothing the sender wrote (spacing, key order, a duplicated key,
 * number spellings) is lost to a parse and re-serialization. jsonc-parser's scanner (Microsoft's, the
 * one VS Code uses) gives the offsets; the text was already checked as strict JSON by the caller.
 */
import { visit } from "jsonc-parser";

/** Where an object's members end: the offset of its closing brace and whether it has any member. */
interface ObjectEnd {
  close: number;
  members: string[];
}

/** The top-level object's end and members, and the end of the object value of its member `key` (if it is one). */
interface Layout {
  root: ObjectEnd;
  keyCount: number;
  inner: ObjectEnd | null;
}

function layoutOf(text: string, key: string): Layout {
  const root: ObjectEnd = { close: -1, members: [] };
  let inner: ObjectEnd | null = null;
  let depth = 0;
  let valueOfKey = false;
  let inInner = false;
  visit(text, {
    onObjectBegin: () => {
      depth++;
      if (valueOfKey && depth === 2) {
        inner = { close: -1, members: [] };
        inInner = true;
      }
      valueOfKey = false;
    },
    onObjectProperty: (name) => {
      if (depth === 1) root.members.push(name);
      else if (inInner && depth === 2) inner!.members.push(name);
      valueOfKey = depth === 1 && name === key;
    },
    onObjectEnd: (offset) => {
      if (depth === 1) root.close = offset;
      if (depth === 2 && inInner) {
        inner!.close = offset;
        inInner = false;
      }
      depth--;
    },
    onArrayBegin: () => {
      depth++;
      valueOfKey = false;
    },
    onArrayEnd: () => {
      depth--;
    },
    onLiteralValue: () => {
      valueOfKey = false;
    },
  });
  return { root, keyCount: root.members.filter((name) => name === key).length, inner };
}

/** `member` (`"name":value`) inserted before an object's closing brace, after a comma when it has members. */
function insertInto(text: string, object: ObjectEnd, member: string): string {
  const separator = object.members.length > 0 ? "," : "";
  return `${text.slice(0, object.close)}${separator}${member}${text.slice(object.close)}`;
}

/** The text with a member added, or why it cannot be added without changing what the sender wrote. */
export type Inserted = { text: string } | { leftAsSent: string };

/**
 * Adds `key: value` to the top-level object, or, when `within` is given and the object already has
 * that member, `key: value` inside it. Refuses (with the reason) a member that is there already, a
 * `within` member that is not an object, and a `within` member named twice (which one a server
 * reads is its own choice).
 */
export function insertMember(text: string, key: string, value: unknown, within?: string): Inserted {
  const member = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
  const layout = layoutOf(text, within ?? key);
  if (layout.root.close < 0) return { leftAsSent: "the body is not a JSON object" };
  if (within === undefined || layout.keyCount === 0) {
    const name = within ?? key;
    if (layout.keyCount > 0) return { leftAsSent: `the body already has a ${name} member` };
    const added = within === undefined ? member : `${JSON.stringify(within)}:{${member}}`;
    return { text: insertInto(text, layout.root, added) };
  }
  if (layout.keyCount > 1) return { leftAsSent: `the body names ${within} ${layout.keyCount} times` };
  if (!layout.inner) return { leftAsSent: `the body's ${within} is not an object` };
  if (layout.inner.members.includes(key)) return { leftAsSent: `the body's ${within} already has ${key}` };
  return { text: insertInto(text, layout.inner, member) };
}
