import type { Profile, ToolTexts } from "../profile.js";
import type { RuntimeTool } from "../types.js";
import { editTool, readTool, writeTool } from "./file-tools.js";
import { findTool, grepTool, lsTool } from "./search-tools.js";
import { bashTool, powershellTool } from "./shell-tools.js";

/** pi's registry order for the built-ins; powershell is registered on every platform. */
export const BUILTIN_ORDER = ["read", "bash", "powershell", "edit", "write", "grep", "find", "ls"] as const;
export const DEFAULT_ACTIVE = ["read", "bash", "edit", "write"];

export function createBuiltinTools(profile: Pick<Profile, "tools">): RuntimeTool[] {
  const texts = (name: string): ToolTexts => profile.tools[name]!;
  const factories: Record<(typeof BUILTIN_ORDER)[number], (t: typeof texts) => RuntimeTool> = {
    read: readTool,
    bash: bashTool,
    powershell: powershellTool,
    edit: editTool,
    write: writeTool,
    grep: grepTool,
    find: findTool,
    ls: lsTool,
  };
  return BUILTIN_ORDER.map((name) => {
    const tool = factories[name](texts);
    const schema = texts(name).schema;
    return schema ? { ...tool, parameters: schema } : tool;
  });
}
