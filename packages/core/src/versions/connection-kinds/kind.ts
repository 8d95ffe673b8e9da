import type { z } from "zod";
import { type ConnectionKindName, type FieldSpec, fieldValue } from "../forms/fields";

/**
 * A connection kind: everything the product knows about one kind of account in one module (versions/connection-kinds/<kind>.ts):
 * its settings schema (connections.config), the form's fields, and what its secret is. The web's Settings form, the
 * server's validation and Test connection all read these modules. Pure: zod and field descriptions only, so the
 * browser loads them (`@holdfast/core/kinds`).
 */
export interface ConnectionKindModule<K extends ConnectionKindName = ConnectionKindName, S extends z.ZodType = z.ZodType> {
  kind: K;
  /** Plain words: "Email (SMTP)". */
  label: string;
  /** One sentence: what steps use it for. */
  description: string;
  /** The non-secret settings, stored in connections.config. */
  config: S;
  /** What a new form starts from. */
  defaults: Partial<z.input<S>>;
  fields: FieldSpec[];
  /** The write-only secret (stored encrypted, never shown back); null: this kind has none. */
  secret: { label: string; help: string; required: boolean } | null;
  /** Settings that make an optional secret necessary, as the reason ("when a user name is set"); null: not needed. */
  needsSecret?(config: z.output<S>): string | null;
  /** The settings as one line for the list ("smtp.example.com:587 as sam@acme.com"). */
  summary(config: z.output<S>): string;
}

/** Typed identity: keeps a module's literal kind and schema types. */
export const defineConnectionKind = <K extends ConnectionKindName, S extends z.ZodType>(m: ConnectionKindModule<K, S>): ConnectionKindModule<K, S> => m;

/** An http(s) URL, with the refusal as words. */
export const httpUrl = (what = "a web address") => (v: string) => /^https?:\/\/[^\s/]+/i.test(v) || `must be ${what} starting with https://`;

/** One thing wrong with a connection's settings: the field, its label, and what to do, without the label. */
export interface ConfigProblem {
  field: string;
  label: string;
  message: string;
}

const typeWords: Record<string, string> = { number: "a number", string: "text", boolean: "yes or no", object: "a group of settings" };

/**
 * The schema's refusals as sentences a person can act on, each naming its field by the form's label
 * ("Port: must be a whole number between 1 and 65535"), never zod's own wording.
 */
export function connectionConfigProblems(kind: ConnectionKindModule, config: unknown): ConfigProblem[] {
  const parsed = kind.config.safeParse(config);
  if (parsed.success) return [];
  const labelOf = (field: string) => kind.fields.find((f) => f.name === field)?.label ?? field;
  const problems: ConfigProblem[] = [];
  for (const issue of parsed.error.issues) {
    const field = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const name = field ? `${field}.${key}` : key;
        problems.push({ field: name, label: name, message: `is not a setting of ${article(kind.label)} connection: remove it` });
      }
      continue;
    }
    if (field === "" && issue.code === "invalid_type") {
      problems.push({ field: "", label: "Settings", message: "are missing: fill in the form" });
      continue;
    }
    const value = fieldValue(config, field);
    let message = issue.message;
    if (issue.code === "invalid_type") {
      message = value === undefined || value === null || value === "" ? "is required" : `must be ${typeWords[issue.expected] ?? issue.expected}`;
    } else if (issue.code === "invalid_value" && "values" in issue) {
      message = `must be one of ${(issue.values as unknown[]).map((v) => `"${String(v)}"`).join(", ")}`;
    }
    problems.push({ field, label: labelOf(field), message });
  }
  return problems;
}

/**
 * What is wrong with the secret for these (valid) settings, as a sentence; null when nothing is. `hasSecret`: one is
 * typed in the form or already saved.
 */
export function connectionSecretProblem(kind: ConnectionKindModule, config: unknown, hasSecret: boolean): string | null {
  if (!kind.secret || hasSecret) return null;
  if (kind.secret.required) return `${kind.secret.label}: is required`;
  const parsed = kind.config.safeParse(config);
  const reason = parsed.success ? kind.needsSecret?.(parsed.data) : null;
  return reason ? `${kind.secret.label}: is required ${reason}` : null;
}

/** A connection's name: what steps name it by. */
export const connectionNamePattern = /^[a-z][a-z0-9_-]{0,62}$/;

/** The name rule as a sentence, or null when the name is fine. */
export function connectionNameProblem(name: string): string | null {
  if (name.trim() === "") return "Name: is required";
  if (!connectionNamePattern.test(name)) {
    return "Name: use lowercase letters, digits, - or _, starting with a letter, at most 63 characters (e.g. mailbox or sales-crm)";
  }
  return null;
}

/**
 * A zod error map for forms (`schema.safeParse(v, { error: connectionIssueWords })`, or the zod resolver's options):
 * the schema's own messages win; what it leaves to zod ("expected number, received NaN") reads as words instead.
 */
export function connectionIssueWords(iss: { code?: string; input?: unknown; expected?: string }): string | undefined {
  if (iss.code !== "invalid_type") return undefined;
  if (iss.input === undefined || iss.input === null || iss.input === "") return "is required";
  return `must be ${typeWords[iss.expected ?? ""] ?? iss.expected}`;
}

/** "Port: must be a number between 1 and 65535". */
export const problemSentence = (p: ConfigProblem) => (p.label ? `${p.label}: ${p.message}` : p.message);

const article = (label: string) => (/^[AEIOU]/i.test(label) ? `an ${label}` : `a ${label}`);
