import { allKinds, type KindModule, kindOf } from "@holdfast/core/kinds";

/** The palette: every registered node kind (core's versions/kinds/registry.ts), grouped as the modules say. */
export const paletteGroups = ["Start", "Waits", "Actions", "Logic"] as const;

export function palette(): KindModule[] {
  return allKinds();
}

export const kindInfo = (kind: string): KindModule | undefined => kindOf(kind);

/**
 * A new, unused slug id for a node of this kind (ids are never regenerated after this): not on the canvas, and not
 * one a published version used (`reserved`, the draft's publishedIds: a published id names one step for the
 * automation's life, and publishing refuses a draft that gives it to another).
 */
export function newNodeId(kind: string, taken: Set<string>, reserved: ReadonlySet<string> = new Set()): string {
  const free = (id: string) => !taken.has(id) && !reserved.has(id);
  if (free(kind)) return kind;
  for (let i = 2; ; i++) if (free(`${kind}_${i}`)) return `${kind}_${i}`;
}
