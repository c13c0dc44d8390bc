/**
 * The skills the model has loaded, in the order it loaded them. Loading a skill again replaces its
 * rendered SOP in place instead of adding a second entry. Every operation is synchronous, so on
 * Node's single thread no caller ever sees a half-applied change (the seed's "concurrency-safe").
 */
export interface ActiveSkillEntry {
  name: string;
  rendered: string;
}

export class ActiveSkills {
  private readonly entriesByName = new Map<string, string>();

  /** A Map keeps the first insertion's position when a key is set again: order of first load. */
  activate(name: string, rendered: string): void {
    this.entriesByName.set(name, rendered);
  }

  entries(): ActiveSkillEntry[] {
    return [...this.entriesByName].map(([name, rendered]) => ({ name, rendered }));
  }
}
