import { z } from "zod";
import { defineInlineKind } from "./kind";

/** A split's path label: it names the edge the path leaves by ("A", "B", "control"). */
export const splitLabel = /^[A-Za-z0-9_-]{1,20}$/;

/**
 * The A/B split: two or more paths, each a label and a whole-number weight. Which path a contact takes is decided by
 * decide/walk/split.ts from the contact and this step alone, so a repeated delivery or a retry takes the same path.
 * Changing a weight is a new version, as every change is.
 */
export const splitConfig = z
  .object({
    paths: z
      .record(
        z.string(),
        z.coerce
          .number({ error: "a path's weight is a whole number, such as 50" })
          .int("a path's weight is a whole number, such as 50")
          .min(1, "every path's weight is at least 1")
          .max(10_000, "a path's weight is at most 10,000"),
      )
      .refine((p) => Object.keys(p).every((l) => splitLabel.test(l)), "a path's name is letters, digits, _ or -, at most 20 (such as A or B)")
      .refine((p) => Object.keys(p).length >= 2, "an A/B split needs at least two paths")
      .refine((p) => Object.keys(p).length <= 10, "an A/B split has at most ten paths")
      .refine((p) => new Set(Object.keys(p).map((l) => l.toLowerCase())).size === Object.keys(p).length, "each path needs its own name (A and a count as the same)"),
  })
  .strict();
export type SplitConfig = z.output<typeof splitConfig>;

/** The paths in their one order (by name, whatever order the stored JSON keeps), with their weights. */
export function splitPaths(config: Pick<SplitConfig, "paths">): { label: string; weight: number }[] {
  return Object.keys(config.paths)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((label) => ({ label, weight: Number(config.paths[label]) }));
}

/** The weights in words, in path order: "50/50". */
export function splitWeights(config: Pick<SplitConfig, "paths">): string {
  return splitPaths(config)
    .map((p) => p.weight)
    .join("/");
}

export const split = defineInlineKind({
  kind: "split",
  label: "A/B split",
  icon: "⑂",
  description: "Sends each contact down one of two or more paths, by weight; a contact always takes the same path.",
  group: "Logic",
  inline: true,
  config: splitConfig,
  defaults: { paths: { A: 50, B: 50 } },
  fields: [
    {
      name: "paths",
      label: "Paths",
      help: "Name each path (such as A and B) and give it a whole-number weight: with 50 and 50 half of the contacts take each path. Each contact is put on one path for good, so a repeat or a retry takes the same path.",
      required: true,
      widget: { type: "key-values", value: "text", keyLabel: "Path", valueLabel: "Weight" },
    },
  ],
  outputs: ["A", "B"],
  outputsFor: (c) => splitPaths(c).map((p) => p.label),
  outputLabel: splitLabel,
  output: [],
  summary: (c) => {
    const paths = splitPaths(c);
    const total = paths.reduce((s, p) => s + p.weight, 0);
    return `Split ${paths.map((p) => `${p.label} ${Math.round((p.weight / total) * 1000) / 10}%`).join(", ")}`;
  },
});
