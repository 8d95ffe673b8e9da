import type { Condition } from "../../versions/graph";

/** What a branch condition can see: the run's input and each step's latest output. */
export interface WalkContext {
  input: unknown;
  steps: Record<string, { output: unknown }>;
}

export function readPath(context: WalkContext, path: string): unknown {
  let value: unknown = context;
  for (const part of path.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

export function evaluate(condition: Condition, context: WalkContext): boolean {
  if ("all" in condition) return condition.all.every((c) => evaluate(c, context));
  if ("any" in condition) return condition.any.some((c) => evaluate(c, context));
  if ("not" in condition) return !evaluate(condition.not, context);
  const actual = readPath(context, condition.path);
  switch (condition.op) {
    case "eq":
      return actual === condition.value;
    case "neq":
      return actual !== condition.value;
    case "gt":
      return typeof actual === "number" && actual > condition.value;
    case "gte":
      return typeof actual === "number" && actual >= condition.value;
    case "lt":
      return typeof actual === "number" && actual < condition.value;
    case "lte":
      return typeof actual === "number" && actual <= condition.value;
    case "exists":
      return actual !== undefined && actual !== null;
    case "truthy":
      return Boolean(actual);
    case "in":
      return condition.value.some((v) => v === actual);
    case "contains":
      return (
        (typeof actual === "string" && actual.includes(condition.value)) ||
        (Array.isArray(actual) && actual.includes(condition.value))
      );
  }
}
