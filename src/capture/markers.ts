import type { WireDissection } from "../providers/types.js";
import type { MarkerSpec } from "./types.js";

function matches(spec: MarkerSpec, text: string): boolean {
  if (typeof spec.match === "string") return text.includes(spec.match);
  spec.match.lastIndex = 0;
  return spec.match.test(text);
}

/**
 * A marker counts the units of its part that contain the match: tool definitions, system parts, or
 * messages. Counting units rather than raw occurrences keeps "the search result is in messages" at 1
 * however many `Shape:` blocks that one result holds.
 */
export function countMarker(spec: MarkerSpec, d: WireDissection): number {
  const units =
    spec.in === "tools"
      ? d.tools.map((t) => t.json)
      : spec.in === "system"
        ? d.systemParts
        : d.messages.map((m) => m.text);
  return units.filter((unit) => matches(spec, unit)).length;
}

export function countMarkers(markers: Record<string, MarkerSpec>, d: WireDissection): Record<string, number> {
  return Object.fromEntries(Object.entries(markers).map(([name, spec]) => [name, countMarker(spec, d)]));
}
