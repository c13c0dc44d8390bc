import { z } from "zod";
import type { DisclosureTexts } from "./types.js";

/** What the profile's `extensions.loadSkill` must hold: every sentence of the load_skill model. */

const text = z.string({ error: "expected a string" });

export const disclosureTextsSchema: z.ZodType<DisclosureTexts> = z.object(
  {
    toolDescription: text,
    snippet: text,
    parameters: z.object({ name: text, arguments: text }, { error: "expected a mapping" }),
    catalogIntro: text,
    environmentHeader: text,
    environmentLines: z.array(text, { error: "expected a list of strings" }),
    activeSkillsIntro: text,
    allowedTools: text,
    loaded: text,
    unknownSkill: text,
    droppedSkill: text,
  },
  { error: "expected a mapping" },
);
