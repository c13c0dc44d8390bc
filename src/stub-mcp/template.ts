/**
 * Fills a fixture text template from call arguments: `{name}` becomes that argument (strings as they
 * are, anything else as JSON), `{args}` the compact JSON of all arguments, and a placeholder naming
 * an argument that was not given becomes empty — the way the original stub echoed `value ?? ""`.
 */
export function fillTemplate(template: string, args: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (_whole, key: string) => {
    if (key === "args") return JSON.stringify(args);
    const value = args[key];
    if (value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}
