import { z } from "zod";
import { defineInlineKind } from "./kind";

/** A path into the run's context: `input.plan`, `steps.fetch_profile.output.status`. */
export const contextPath = z.string().regex(/^(input|steps)(\.[A-Za-z0-9_-]+)*$/, "a path starting with input. or steps.");

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export type Condition =
  | { path: string; op: "eq" | "neq"; value: z.infer<typeof scalar> }
  | { path: string; op: "gt" | "gte" | "lt" | "lte"; value: number }
  | { path: string; op: "exists" | "truthy" }
  | { path: string; op: "in"; value: z.infer<typeof scalar>[] }
  | { path: string; op: "contains"; value: string }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };

export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    z.object({ path: contextPath, op: z.enum(["eq", "neq"]), value: scalar }).strict(),
    z.object({ path: contextPath, op: z.enum(["gt", "gte", "lt", "lte"]), value: z.number() }).strict(),
    z.object({ path: contextPath, op: z.enum(["exists", "truthy"]) }).strict(),
    z.object({ path: contextPath, op: z.literal("in"), value: z.array(scalar) }).strict(),
    z.object({ path: contextPath, op: z.literal("contains"), value: z.string() }).strict(),
    z.object({ all: z.array(conditionSchema).min(1) }).strict(),
    z.object({ any: z.array(conditionSchema).min(1) }).strict(),
    z.object({ not: conditionSchema }).strict(),
  ]),
);

export const opWords: Record<string, string> = {
  eq: "is",
  neq: "is not",
  gt: "is more than",
  gte: "is at least",
  lt: "is less than",
  lte: "is at most",
  exists: "is present",
  truthy: "is set (not empty, 0 or false)",
  in: "is one of",
  contains: "contains",
};

/** A condition in words: `input.plan is "pro"`. */
export function conditionSentence(c: Condition): string {
  if ("all" in c) return c.all.map(conditionSentence).join(" and ");
  if ("any" in c) return c.any.map(conditionSentence).join(" or ");
  if ("not" in c) return `not (${conditionSentence(c.not)})`;
  const value = "value" in c ? ` ${Array.isArray(c.value) ? c.value.map((v) => JSON.stringify(v)).join(", ") : JSON.stringify(c.value)}` : "";
  return `${c.path} ${opWords[c.op] ?? c.op}${value}`;
}

export const branch = defineInlineKind({
  kind: "branch",
  label: "Branch",
  icon: "⋔",
  description: "Goes one way or the other, by a value of the payload or an earlier step.",
  group: "Logic",
  inline: true,
  config: z.object({ condition: conditionSchema }).strict(),
  defaults: { condition: { path: "input.plan", op: "eq", value: "pro" } },
  fields: [{ name: "condition", label: "Condition", help: "When it holds the run takes the true edge, otherwise the false edge.", required: true, widget: { type: "condition" } }],
  outputs: ["true", "false"],
  outputWords: { true: "If it holds, go to", false: "Otherwise, go to" },
  output: [],
  summary: (c) => `If ${conditionSentence(c.condition)}`,
});
