/**
 * Finding MCP tools by what a model types: the lexical ranking behind `mcp({ search })`, the
 * regex variant, name lookup, paging, and the "Did you mean" suggestions of a failed lookup.
 */
import { directToolName, resourceToolName } from "./naming.js";
import type { CachedResource, CachedTool, ToolPrefixMode } from "./types.js";

/** One tool as search sees it, whether it came from the metadata cache or a live server. */
export interface SearchableTool {
  /** The prefixed name the model calls it by. */
  name: string;
  originalName: string;
  server: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  /** Extra phrases configured for this tool (`searchKeywords`). */
  keywords?: string[];
  /** Set for the tools that read an MCP resource. */
  resourceUri?: string;
}

/**
 * A server's tools and resource tools as search sees them, tools first, in the order given. A later
 * entry whose prefixed name is already taken is dropped. Filtering (include/exclude globs, tools
 * hidden from the model, `exposeResources: false`) and keywords are the caller's.
 */
export function toSearchableTools(
  server: string,
  mode: ToolPrefixMode,
  tools: readonly CachedTool[],
  resources: readonly CachedResource[] = [],
): SearchableTool[] {
  const entries: SearchableTool[] = [
    ...tools.map((tool) => ({
      name: directToolName(server, tool.name, mode),
      originalName: tool.name,
      server,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.inputSchema !== undefined ? { inputSchema: tool.inputSchema } : {}),
    })),
    ...resources.map((resource) => {
      const originalName = resourceToolName(resource.name);
      return {
        name: directToolName(server, originalName, mode),
        originalName,
        server,
        description: resource.description ?? `Read resource: ${resource.uri}`,
        resourceUri: resource.uri,
      };
    }),
  ];
  const firstByName = new Map<string, SearchableTool>();
  for (const entry of entries) if (!firstByName.has(entry.name)) firstByName.set(entry.name, entry);
  return [...firstByName.values()];
}

const FIELD_WEIGHTS = { name: 12, originalName: 10, server: 8, description: 5, keywords: 5 } as const;
/** Multipliers for the whole query against a whole field. */
const PHRASE_EQUAL = 14;
const PHRASE_PREFIX = 9;
const PHRASE_CONTAINS = 6;
/** Multipliers for one query token against a field. */
const TOKEN_EQUAL = 4;
const TOKEN_STEM = 2;
const TOKEN_CONTAINS = 1;
/**
 * Shortest field token that may stem-match a longer query token: descriptions tokenize "server's"
 * into "server" and "s", and a one-letter token must not match every query starting with that letter.
 */
const MIN_STEM_LENGTH = 4;
const FULL_COVERAGE_BONUS = 25;
const FIRST_TOKEN_IN_NAME_BONUS = 8;
const EXACT_FIELD_BONUS = 20;
const MAX_REGEX_LENGTH = 256;
const MAX_SUGGESTIONS = 5;

/** camelCase split, separators to spaces, lowercase: `getUser.by_id` → `get user by id`. */
export function normalizeSearchText(value: string): string {
  return value
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_./:-]+/g, " ")
    .toLowerCase();
}

export function tokenize(value: string): string[] {
  return normalizeSearchText(value)
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

interface Query {
  phrase: string;
  tokens: string[];
}

/** How well the whole query matches one text: 0 when it does not occur in it. */
function phraseMultiplier(text: string, phrase: string): number {
  if (text === phrase) return PHRASE_EQUAL;
  if (text.startsWith(phrase)) return PHRASE_PREFIX;
  return text.includes(phrase) ? PHRASE_CONTAINS : 0;
}

/** How well one query token matches a field (its tokens, or anywhere in its texts): 0 for no match. */
function tokenMultiplier(token: string, fieldTokens: string[], texts: string[]): number {
  if (fieldTokens.includes(token)) return TOKEN_EQUAL;
  const stems = fieldTokens.some(
    (fieldToken) =>
      fieldToken.startsWith(token) || (fieldToken.length >= MIN_STEM_LENGTH && token.startsWith(fieldToken)),
  );
  if (stems) return TOKEN_STEM;
  return texts.some((text) => text.includes(token)) ? TOKEN_CONTAINS : 0;
}

/** The tool's score for a query, or null when it does not match well enough to be listed. */
export function scoreTool(query: string, tool: SearchableTool, opts: { useKeywords?: boolean } = {}): number | null {
  const parsed: Query = { phrase: normalizeSearchText(query).trim(), tokens: tokenize(query) };
  if (parsed.tokens.length === 0) return null;
  return scoreParsed(parsed, tool, opts.useKeywords !== false);
}

function scoreParsed({ phrase, tokens }: Query, tool: SearchableTool, useKeywords: boolean): number | null {
  let score = 0;
  let phraseMatched = false;
  let exactField = false;
  const matched = new Set<string>();

  const fields: [number, string][] = [
    [FIELD_WEIGHTS.name, tool.name],
    [FIELD_WEIGHTS.originalName, tool.originalName],
    [FIELD_WEIGHTS.server, tool.server],
    [FIELD_WEIGHTS.description, tool.description ?? ""],
  ];
  for (const [weight, raw] of fields) {
    const text = normalizeSearchText(raw);
    const multiplier = phraseMultiplier(text, phrase);
    if (multiplier > 0) phraseMatched = true;
    if (multiplier === PHRASE_EQUAL) exactField = true;
    score += weight * multiplier;
    score += scoreTokens(tokens, tokenize(text), [text], weight, matched);
  }

  // Keywords are separate phrases: the best single phrase counts, so a query spanning two
  // unrelated keywords does not phrase-match their concatenation.
  const phrases = useKeywords ? (tool.keywords ?? []).map((k) => normalizeSearchText(k).trim()).filter(Boolean) : [];
  if (phrases.length > 0) {
    const best = Math.max(...phrases.map((keyword) => phraseMultiplier(keyword, phrase)));
    if (best > 0) phraseMatched = true;
    if (best === PHRASE_EQUAL) exactField = true;
    score += FIELD_WEIGHTS.keywords * best;
    score += scoreTokens(tokens, phrases.flatMap(tokenize), phrases, FIELD_WEIGHTS.keywords, matched);
  }

  const coverage = matched.size / tokens.length;
  // Without a phrase hit, a short query must match completely and a longer one mostly.
  if (!phraseMatched && (tokens.length <= 2 ? coverage !== 1 : coverage < 0.6)) return null;
  score += coverage === 1 ? FULL_COVERAGE_BONUS : Math.round(coverage * 10);
  if (tokenize(tool.name).includes(tokens[0]!)) score += FIRST_TOKEN_IN_NAME_BONUS;
  if (exactField) score += EXACT_FIELD_BONUS;
  return score;
}

function scoreTokens(
  tokens: string[],
  fieldTokens: string[],
  texts: string[],
  weight: number,
  matched: Set<string>,
): number {
  let score = 0;
  for (const token of tokens) {
    const multiplier = tokenMultiplier(token, fieldTokens, texts);
    if (multiplier === 0) continue;
    score += weight * multiplier;
    matched.add(token);
  }
  return score;
}

function byName(a: SearchableTool, b: SearchableTool): number {
  return a.name.localeCompare(b.name);
}

/** The matching tools, best first; ties in name order. Keywords count unless `useKeywords` is false. */
export function rankTools(
  query: string,
  tools: readonly SearchableTool[],
  opts: { useKeywords?: boolean } = {},
): SearchableTool[] {
  const parsed: Query = { phrase: normalizeSearchText(query).trim(), tokens: tokenize(query) };
  if (parsed.tokens.length === 0) return [];
  const useKeywords = opts.useKeywords !== false;
  const scored: { tool: SearchableTool; score: number }[] = [];
  for (const tool of tools) {
    const score = scoreParsed(parsed, tool, useKeywords);
    if (score !== null) scored.push({ tool, score });
  }
  return scored.sort((a, b) => b.score - a.score || byName(a.tool, b.tool)).map(({ tool }) => tool);
}

/** Tools in name order: what a blank query lists for one server. */
export function sortByName(tools: readonly SearchableTool[]): SearchableTool[] {
  return [...tools].sort(byName);
}

/**
 * Tools whose name, description or a keyword matches `pattern` (case-insensitive), in the order given.
 * A pattern that is too long or does not compile comes back as the text to show instead.
 */
export function regexTools(
  pattern: string,
  tools: readonly SearchableTool[],
): { matches: SearchableTool[] } | { error: string } {
  if (pattern.length > MAX_REGEX_LENGTH) {
    return { error: `Regex query is too long; maximum length is ${MAX_REGEX_LENGTH} characters.` };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, "i");
  } catch {
    return { error: `Invalid regex: ${pattern}` };
  }
  const matches = tools.filter(
    (tool) =>
      regex.test(tool.name) || regex.test(tool.description ?? "") || (tool.keywords ?? []).some((k) => regex.test(k)),
  );
  return { matches };
}

/** The tools a name refers to: exact name matches, else matches that treat `-` and `_` alike. */
export function matchToolName(tools: readonly SearchableTool[], name: string): SearchableTool[] {
  const exact = tools.filter((tool) => tool.name === name);
  if (exact.length > 0) return exact;
  const wanted = name.replace(/-/g, "_");
  return tools.filter((tool) => tool.name.replace(/-/g, "_") === wanted);
}

/**
 * Up to five names for a lookup that failed: the wanted name loses the longest known prefix
 * (`<prefix>_`), then is ranked like a search without keywords.
 */
export function suggestToolNames(
  wanted: string,
  tools: readonly SearchableTool[],
  prefixes: readonly string[],
): string[] {
  const longest = prefixes
    .filter((prefix) => prefix && wanted.startsWith(`${prefix}_`))
    .reduce((best, prefix) => (prefix.length > best.length ? prefix : best), "");
  const query = longest ? wanted.slice(longest.length + 1) : wanted;
  return rankTools(query, tools, { useKeywords: false })
    .slice(0, MAX_SUGGESTIONS)
    .map((tool) => tool.name);
}

export interface Page<T> {
  items: T[];
  total: number;
  /** Where the next page starts; null on the last page. */
  nextOffset: number | null;
}

/** One page of results; offset and limit are clamped to whole numbers (offset ≥ 0, limit ≥ 1). */
export function paginate<T>(items: readonly T[], offset: number, limit: number): Page<T> {
  const start = Number.isFinite(offset) ? Math.max(0, Math.trunc(offset)) : 0;
  const size = Number.isFinite(limit) ? Math.max(1, Math.trunc(limit)) : 1;
  const page = items.slice(start, start + size);
  const next = start + page.length;
  return { items: page, total: items.length, nextOffset: next < items.length ? next : null };
}
