/**
 * How a form shows one setting. Step kinds (versions/kinds/<kind>.ts) and connection kinds describe their settings as a list of
 * fields; the web renders every form from that list (apps/web/src/app/forms/), so a new kind needs no editor change.
 * Pure data: no IO, safe in the browser.
 */

import type { ConnectionKindName } from "../../base/types/connections";

export type { ConnectionKindName };

export type Widget =
  /** One line of plain text. `format` adds a hint and the browser's own check. */
  | { type: "text"; placeholder?: string; format?: "email" | "url" | "host" | "slug" }
  /** Text with {{variables}}: the variable picker lists what exists at this node. */
  | { type: "template"; multiline?: boolean; placeholder?: string }
  /** Write-only: never shown back, only replaced. */
  | { type: "secret"; placeholder?: string }
  /** `scale`: the stored value is the shown one times this (dollars shown, micro-dollars stored: 1_000_000). */
  | { type: "number"; min?: number; max?: number; step?: number; unit?: string; scale?: number }
  /** A number of seconds, shown as a value and a unit (minutes, hours, days). */
  | { type: "duration"; min?: number; max?: number }
  | { type: "boolean" }
  | { type: "select"; options: { value: string; label: string; help?: string }[] }
  /** The name of one of the organisation's connections of this kind, with "New connection" in place. */
  | { type: "connection"; kind: ConnectionKindName }
  /** Members by email and/or a role. */
  | { type: "approvers" }
  /** An IANA time zone, searchable. */
  | { type: "zone" }
  /** A dotted path into the trigger's payload ("input.contact.timezone"), picked from the sample payload. */
  | { type: "payload-path"; prefix: "input." | ""; placeholder?: string }
  /** The fields a trigger's form sends: a small table of name, type, example and role (versions/kinds/declared-fields.ts). */
  | { type: "declared-fields" }
  /** The payload's field that tells submissions apart: the common id fields detected in the sample come first. */
  | { type: "id-field" }
  /** Another step of this graph, by id, optionally of some kinds only. */
  | { type: "step"; kinds?: string[] }
  /** The wait rule, written as a sentence with its next due instants previewed. */
  | { type: "wait-rule" }
  /** A branch condition: a value, a comparison, and what to compare with. */
  | { type: "condition" }
  /** Named values (CRM fields, HTTP headers): each value a template or plain text. */
  | { type: "key-values"; value: "template" | "text"; keyLabel?: string; valueLabel?: string }
  /** Anything else, as JSON (kept for the odd setting a widget does not cover). */
  | { type: "json" };

export interface FieldSpec {
  /** Dotted path under the config ("slack.channel"). */
  name: string;
  label: string;
  help?: string;
  required?: boolean;
  widget: Widget;
  /** Shown under "More settings" (closed by default). */
  advanced?: boolean;
  /** Shown only while another field has one of these values. */
  showIf?: { field: string; in: unknown[] };
}

/** Reads a dotted path from a config object. */
export function fieldValue(config: unknown, name: string): unknown {
  let v: unknown = config;
  for (const part of name.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Writes a dotted path into a copy of a config object; `undefined` removes the key. */
export function withFieldValue<T>(config: T, name: string, value: unknown): T {
  const parts = name.split(".");
  const root: Record<string, unknown> = { ...((config ?? {}) as Record<string, unknown>) };
  let at = root;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    at[part] = next !== null && typeof next === "object" && !Array.isArray(next) ? { ...(next as Record<string, unknown>) } : {};
    at = at[part] as Record<string, unknown>;
  }
  const last = parts.at(-1) as string;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return root as T;
}

/** The parts of a zod issue the messages below read (zod 4's raw issue, kept loose so this file imports no zod). */
interface RawIssue {
  code?: string;
  input?: unknown;
  origin?: string;
  minimum?: unknown;
  maximum?: unknown;
  format?: string;
  values?: unknown[];
  expected?: string;
}

/**
 * Plain-words messages for a config's schema issues (zod's per-parse `error` option): "Required" rather than
 * "Invalid input: expected string, received undefined". Messages a schema states itself take precedence.
 */
export function friendlyIssue(issue: RawIssue): string | undefined {
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined || issue.input === null || issue.input === "") return "Required";
      return issue.expected === "number" ? "Must be a number" : issue.expected === "boolean" ? "Must be on or off" : `Must be ${issue.expected === "object" ? "filled in" : `a ${issue.expected}`}`;
    case "too_small":
      if (issue.origin === "string" && Number(issue.minimum) <= 1) return "Required";
      if (issue.origin === "string") return `At least ${issue.minimum} characters`;
      if (issue.origin === "array") return Number(issue.minimum) <= 1 ? "Add at least one" : `Add at least ${issue.minimum}`;
      return `At least ${issue.minimum}`;
    case "too_big":
      if (issue.origin === "string") return `At most ${issue.maximum} characters`;
      if (issue.origin === "array") return `At most ${issue.maximum}`;
      return `At most ${issue.maximum}`;
    case "invalid_format":
      if (issue.format === "email") return "Not an email address";
      if (issue.format === "url") return "Not a web address (https://…)";
      return undefined;
    case "invalid_value":
      return issue.values?.length ? `Pick one of: ${issue.values.join(", ")}` : "Pick one of the options";
    case "unrecognized_keys":
      return "Has settings this step does not know (see Advanced)";
    default:
      return undefined;
  }
}
