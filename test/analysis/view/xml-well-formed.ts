/**
 * A small well-formedness check for the JUnit output (no XML parser is installed): one root
 * element, every tag closed in order, attributes quoted, only the five predefined or numeric
 * entities. Returns the elements met, as `name` with their attributes, for assertions.
 */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
}

const NAME = "[A-Za-z_][\\w.-]*";
const ATTR = new RegExp(`\\s+(${NAME})="([^"<]*)"`, "y");
const ENTITY = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/y;

export function parseXml(text: string): XmlElement {
  let i = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const fail = (why: string): never => {
    throw new Error(`not well-formed at ${i}: ${why}`);
  };
  const checkText = (t: string) => {
    for (let k = t.indexOf("&"); k >= 0; k = t.indexOf("&", k + 1)) {
      ENTITY.lastIndex = k;
      if (!ENTITY.test(t)) fail(`bad entity in ${JSON.stringify(t.slice(k, k + 10))}`);
    }
  };
  if (text.startsWith("<?xml")) i = text.indexOf("?>") + 2;
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    const chunk = text.slice(i, lt < 0 ? text.length : lt);
    if (chunk.trim() !== "" && stack.length === 0) fail("text outside the root element");
    checkText(chunk);
    if (lt < 0) break;
    i = lt;
    const close = new RegExp(`</(${NAME})\\s*>`, "y");
    close.lastIndex = i;
    const c = close.exec(text);
    if (c) {
      const open = stack.pop();
      if (!open || open.name !== c[1]) fail(`</${c[1]}> closes ${open?.name ?? "nothing"}`);
      i = close.lastIndex;
      continue;
    }
    const start = new RegExp(`<(${NAME})`, "y");
    start.lastIndex = i;
    const s = start.exec(text) ?? fail("expected a tag");
    const element: XmlElement = { name: s[1]!, attrs: {}, children: [] };
    i = start.lastIndex;
    for (;;) {
      ATTR.lastIndex = i;
      const a = ATTR.exec(text);
      if (!a) break;
      if (a[1]! in element.attrs) fail(`duplicate attribute ${a[1]}`);
      checkText(a[2]!);
      element.attrs[a[1]!] = a[2]!;
      i = ATTR.lastIndex;
    }
    while (text[i] === " ") i++;
    const selfClosing = text.startsWith("/>", i);
    if (!selfClosing && text[i] !== ">") fail(`unterminated <${element.name}>`);
    i += selfClosing ? 2 : 1;
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element);
    else if (root) fail("a second root element");
    else root = element;
    if (!selfClosing) stack.push(element);
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1]!.name}> never closed`);
  return root ?? fail("no root element");
}
