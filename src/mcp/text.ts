/** Small text helpers shared by the adapter's result texts and tool snippets. */

/**
 * Shortens `text` to at most `n` characters plus `...`. The cut moves back to the last space
 * only when that keeps more than 60% of the budget, so a long first word is cut mid-word
 * rather than leaving almost nothing. Empty or short text comes back unchanged.
 */
export function truncateAtWord(text: string, n: number): string {
  if (!text || text.length <= n) return text;
  const cut = text.slice(0, n);
  const lastSpace = cut.lastIndexOf(" ");
  return `${lastSpace > n * 0.6 ? cut.slice(0, lastSpace) : cut}...`;
}
