import { allKinds, type KindModule, kindOf } from "@holdfast/core/kinds";

/** The palette: every registered node kind (core's kinds/registry.ts), grouped as the modules say. */
export const paletteGroups = ["Start", "Waits", "Actions", "Logic"] as const;

export function palette(): KindModule[] {
  return allKinds();
}

export const kindInfo = (kind: string): KindModule | undefined => kindOf(kind);

/** A new, unused slug id for a node of this kind (ids are never regenerated after this). */
export function newNodeId(kind: string, taken: Set<string>): string {
  if (!taken.has(kind)) return kind;
  for (let i = 2; ; i++) if (!taken.has(`${kind}_${i}`)) return `${kind}_${i}`;
}
