/**
 * The rows of the request list, in the order drawn. A run whose records name their conversations is
 * laid out by conversation: each main conversation under a heading, its requests, then each subagent
 * and side call it started beneath it, indented, under a heading of its own (and theirs beneath
 * them); a folded heading hides what is under it. A diff's pairs are laid out the same way, each by
 * the conversation of its request in run A (run B's where A sent none). A run without conversations is
 * one row per request or pair, in order.
 */
import type { PageContext } from "./page-context.js";
import type { PageRequest } from "./page-data.js";

/** A conversation's heading row. */
export interface GroupRow {
  group: string;
  role: string;
  depth: number;
  /** Its own requests, and the requests of every conversation beneath it. */
  requests: number;
  own: number;
  /** Prompt tokens of its own requests (our count; null when the run's tokens were not counted, or for pairs), and of those beneath it too. */
  ownTokens: number | null;
  tokens: number;
  folded: boolean;
  /** Its rows are a diff's pairs, not requests. */
  pairs: boolean;
}

/** A request's row (`item`: the request's index, or the pair's in diff mode). */
export interface ItemRow {
  item: number;
  depth: number;
}

export type ListRow = GroupRow | ItemRow;

export const isGroup = (row: ListRow): row is GroupRow => "group" in row;

interface Conversation {
  id: string;
  role: string;
  parent: string;
  members: number[];
  children: Conversation[];
}

/** What the layout needs of one item: its conversation (id, role, parent) and its prompt tokens. */
interface ListItem {
  c: PageRequest["c"];
  tokens: number;
}

/** The items in list order: the requests, or the pairs, each by its side A's request (B's where A sent none). */
function listItems(page: PageContext): ListItem[] {
  const of = (r: PageRequest): ListItem => ({ c: r.c, tokens: r.t?.[3] ?? 0 });
  if (!page.pairs) return page.requests.map(of);
  return page.pairs.map((p) => of(page.requests[p.a >= 0 ? p.a : p.b]));
}

/** The conversations in order of first appearance, each with its items and the ones it started. */
function conversationTree(items: ListItem[]): Conversation[] {
  const byId = new Map<string, Conversation>();
  for (let i = 0; i < items.length; i++) {
    const [id, role, parent] = items[i].c ?? ["", "main", ""];
    let c = byId.get(id);
    if (!c) {
      c = { id, role, parent, members: [], children: [] };
      byId.set(id, c);
    }
    c.members.push(i);
  }
  const roots: Conversation[] = [];
  for (const c of byId.values()) {
    const parent = c.parent === "" ? undefined : byId.get(c.parent);
    if (parent && parent !== c) parent.children.push(c);
    else roots.push(c);
  }
  return roots;
}

function sizeOf(c: Conversation, items: ListItem[]): { requests: number; tokens: number } {
  let n = c.members.length;
  let tokens = c.members.reduce((sum, i) => sum + items[i].tokens, 0);
  for (const child of c.children) {
    const s = sizeOf(child, items);
    n += s.requests;
    tokens += s.tokens;
  }
  return { requests: n, tokens };
}

/** The rows to draw; `folded` holds the ids of the conversations whose heading is folded. */
export function listRows(page: PageContext, folded: ReadonlySet<string>): ListRow[] {
  const items = listItems(page);
  if (!items.some((item) => item.c)) return items.map((_, item) => ({ item, depth: 0 }));
  const rows: ListRow[] = [];
  const pairs = page.pairs !== null;
  const counted = !pairs && page.requests.some((r) => r.t);
  const walk = (c: Conversation, depth: number) => {
    const size = sizeOf(c, items);
    const isFolded = folded.has(c.id);
    const role = c.id === "" ? "no conversation" : c.role;
    const ownTokens = counted ? c.members.reduce((sum, i) => sum + items[i].tokens, 0) : null;
    rows.push({ group: c.id, role, depth, own: c.members.length, ownTokens, folded: isFolded, pairs, ...size });
    if (isFolded) return;
    for (const item of c.members) rows.push({ item, depth: depth + 1 });
    for (const child of c.children) walk(child, depth + 1);
  };
  for (const root of conversationTree(items)) walk(root, 0);
  return rows;
}

/** The items in the order the list draws them with every conversation unfolded. */
export const itemsInListOrder = (page: PageContext): number[] =>
  listRows(page, new Set()).flatMap((row) => (isGroup(row) ? [] : [row.item]));
