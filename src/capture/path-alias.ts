/**
 * A folder a run used, stored under another name: a probe's workspace is made per checkout
 * (`/tmp/payload-48213/p1/`) so two checkouts never wait for each other, and stored as the one
 * path every checkout shares (`/tmp/payload-probe/p1/`), so the bodies, tokens and hashes a run
 * records do not depend on where it ran.
 */
export interface PathAlias {
  /** The folder as the run used it. */
  path: string;
  /** The name every stored text gives it instead. */
  storedAs: string;
}

/**
 * `text` with every path under `alias.path` named under `alias.storedAs`: as written, and as a JSON
 * string writes it (a Windows path's backslashes doubled). Only a path followed by a separator is
 * taken, so a longer folder name that starts with the same letters is left alone.
 */
export function aliasPaths(alias: PathAlias | undefined): (text: string) => string {
  if (!alias || alias.path === alias.storedAs) return (text) => text;
  const forms = new Map<string, string>();
  for (const separator of ["/", "\\"]) {
    forms.set(alias.path + separator, alias.storedAs + separator);
    const inJson = (text: string) => JSON.stringify(text).slice(1, -1);
    forms.set(inJson(alias.path + separator), inJson(alias.storedAs + separator));
  }
  return (text) => {
    let out = text;
    for (const [from, to] of forms) if (out.includes(from)) out = out.replaceAll(from, to);
    return out;
  };
}
