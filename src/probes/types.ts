import type { MarkerSpec } from "../capture/types.js";
import type { ScriptStep } from "../providers/scripted-model.js";
import type { WireApi } from "../providers/types.js";

export type CacheSetup = "valid" | "empty-file" | "missing";

export interface ProbeAgent {
  kind: "runtime" | "pi";
  tools?: string[];
  noTools: boolean;
  noBuiltinTools: boolean;
  excludeTools?: string[];
  skills: string[];
  noSkills: boolean;
  skillMode: "index" | "load_skill";
  /** load_skill mode: a folder of skills per catalog layer, copied into the workspace. */
  skillLayers?: { builtin?: string; user?: string; project?: string };
  /** Trust project skill sources (`-a`). */
  trusted: boolean;
  mcp?: { config: string; cache: CacheSetup; exclusive: boolean };
  cwd?: string;
  profile?: string;
}

/** A per-request expectation: one value per request, or `{ all: value }` for every request. */
export type Series = unknown[] | { all: unknown };

export interface WireExpect {
  methods?: string[];
  calls?: { name: string; arguments?: unknown }[];
  /** The server's first message arrives after request N-1 was answered and before request N is sent. */
  firstMessageBefore?: number;
  /** The server receives nothing during the run. */
  silent?: boolean;
}

export interface SystemDelta {
  at: number;
  added?: (string | RegExp)[];
  removed?: (string | RegExp)[];
}

export interface TextExpect {
  equals?: string;
  contains?: string;
  startsWith?: string;
  endsWith?: string;
  matches?: RegExp;
}

/** One expected skill diagnostic; paths are relative to the probe's workspace (`staged/...`). */
export interface SkillDiagnosticExpect {
  type: "warning" | "error" | "collision";
  message: string;
  path: string;
  /** Collisions only: the file that kept the name and the one that lost it. */
  winner?: string;
  loser?: string;
}

export interface SkillsExpect {
  /** Names of the loaded skills, in load order. */
  loaded?: string[];
  /** Every diagnostic of discovery, in order. */
  diagnostics?: SkillDiagnosticExpect[];
}

export interface ProbeExpect {
  requests?: number;
  each: Record<string, Series>;
  constant: string[];
  systemDelta: SystemDelta[];
  toolResults: Record<number, TextExpect>;
  wire: Record<string, WireExpect>;
  surface: { registered?: Series; active?: Series };
  skills?: SkillsExpect;
}

export interface Probe {
  file: string;
  name: string;
  title: string;
  description: string;
  agent: ProbeAgent;
  /** `priceAs`: the real model --cost prices the scripted model as (see price-as.ts for the default). */
  model: {
    api: WireApi;
    id: string;
    priceAs?: string;
    script: ScriptStep[];
    sampling: ScriptStep[];
    /** Ask for cache diagnostics in the runtime's requests (schema.ts). */
    cacheDiagnostics: boolean;
  };
  prompts: string[];
  markers: Record<string, MarkerSpec>;
  expect: ProbeExpect;
  /** The probe on the real pi: why it is skipped there, or what holds there where it differs. */
  pi?: { skip?: string; expect?: Partial<ProbeExpect> };
}
