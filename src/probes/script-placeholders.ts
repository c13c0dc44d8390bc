/**
 * Probe scripts are written before the run, but some arguments only exist at run time: a staged
 * skill lives under a temp workspace. `{{skill:<name>}}` anywhere in a call's arguments (a string
 * value, or the raw JSON text) is replaced by that skill's file path when the run starts.
 */
import { inputError } from "../errors.js";
import type { ScriptStep } from "../providers/scripted-model.js";

const SKILL_PLACEHOLDER = /\{\{skill:([^}]+)\}\}/g;

type CallStep = { call: string; args?: Record<string, unknown> | string };

/** A copy of `script` with every `{{skill:name}}` replaced; an unknown name is bad probe input. */
export function substituteSkillPaths(
  script: ScriptStep[],
  skillPaths: ReadonlyMap<string, string>,
  file: string,
): ScriptStep[] {
  const replaceIn = (text: string, field: string, inJsonText: boolean): string =>
    text.replace(SKILL_PLACEHOLDER, (_, name: string) => {
      const path = skillPaths.get(name);
      if (path === undefined)
        throw inputError(file, field, `{{skill:${name}}} to name a loaded skill, but no skill "${name}" was loaded`);
      // Inside raw JSON text the placeholder sits in a JSON string, so the path is escaped for one.
      return inJsonText ? JSON.stringify(path).slice(1, -1) : path;
    });
  const deep = (value: unknown, field: string): unknown => {
    if (typeof value === "string") return replaceIn(value, field, false);
    if (Array.isArray(value)) return value.map((item, i) => deep(item, `${field}[${i}]`));
    if (value && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, deep(item, `${field}.${key}`)]));
    }
    return value;
  };
  const call = (step: CallStep, field: string): CallStep =>
    typeof step.args === "string"
      ? { ...step, args: replaceIn(step.args, `${field}.args`, true) }
      : step.args === undefined
        ? step
        : { ...step, args: deep(step.args, `${field}.args`) as CallStep["args"] };
  return script.map((step, i) => {
    const field = `model.script[${i}]`;
    if ("text" in step) return step;
    if ("calls" in step) return { calls: step.calls.map((c, j) => call(c, `${field}.calls[${j}]`)) };
    return call(step, field);
  });
}
