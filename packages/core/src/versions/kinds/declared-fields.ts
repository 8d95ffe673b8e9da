import { z } from "zod";
import { isValidZone } from "./wait-rule";

/**
 * The fields a trigger's form sends, declared on the trigger before any delivery: each with a type, an example and
 * what it is to the contact (the email, the time zone, the name, the company, or another field, kept on the contact
 * when asked). The variable picker offers them at once, their examples make a sample, a start reads the contact's
 * email, zone and attributes by their roles. Pure and browser-safe.
 */

export const fieldTypes = ["text", "email", "number", "time_zone", "phone", "url", "date"] as const;
export type DeclaredFieldType = (typeof fieldTypes)[number];
export const fieldTypeWords: Record<DeclaredFieldType, string> = {
  text: "Text",
  email: "Email address",
  number: "Number",
  time_zone: "Time zone",
  phone: "Phone number",
  url: "Web address",
  date: "Date",
};

export const fieldRoles = ["email", "time_zone", "name", "company", "other"] as const;
export type DeclaredFieldRole = (typeof fieldRoles)[number];
export const fieldRoleWords: Record<DeclaredFieldRole, string> = {
  email: "The contact's email",
  time_zone: "The contact's time zone",
  name: "The contact's name",
  company: "The contact's company",
  other: "Another field",
};

/** Contact keys a declared field may not take as its own (the contact's built-in facts). */
export const reservedContactKeys = new Set(["id", "email", "time_zone", "consent", "name", "company"]);

/** A dotted path of plain segments: `email`, `lead.company`. */
const fieldPath = z
  .string()
  .trim()
  .min(1, "Required")
  .max(200)
  .regex(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/, "letters, digits, _ and -, with dots between nested names (lead.company)");

export const declaredFieldSchema = z
  .object({
    name: fieldPath,
    type: z.enum(fieldTypes).default("text"),
    example: z.string().max(200).optional(),
    role: z.enum(fieldRoles).default("other"),
    /** An "other" field kept on the contact as contact.<key> (name and company always are). */
    keep: z.boolean().optional(),
  })
  .strict()
  .superRefine((f, ctx) => {
    const e = f.example?.trim();
    if (!e) return;
    if (f.type === "email" && !/^[^\s@]+@[^\s@]+$/.test(e)) ctx.addIssue({ code: "custom", path: ["example"], message: "an example email address, such as maya@example.com" });
    if (f.type === "time_zone" && !isValidZone(e)) ctx.addIssue({ code: "custom", path: ["example"], message: "an example time zone, such as Europe/Berlin" });
    if (f.type === "number" && !Number.isFinite(Number(e))) ctx.addIssue({ code: "custom", path: ["example"], message: "an example number, such as 42" });
  });
export type DeclaredField = z.output<typeof declaredFieldSchema>;

export const declaredFieldsSchema = z
  .array(declaredFieldSchema)
  .max(50, "At most 50 fields")
  .superRefine((fields, ctx) => {
    const names = new Set<string>();
    const keys = new Set<string>();
    for (const [i, f] of fields.entries()) {
      if (names.has(f.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `"${f.name}" is declared twice` });
      names.add(f.name);
      if (f.role !== "other" && fields.findIndex((g) => g.role === f.role) !== i) {
        ctx.addIssue({ code: "custom", path: [i, "role"], message: `only one field can be ${fieldRoleWords[f.role].toLowerCase()}` });
      }
      if (f.role === "email" && f.type !== "email") ctx.addIssue({ code: "custom", path: [i, "type"], message: "the contact's email is of type Email address" });
      if (f.role === "time_zone" && f.type !== "time_zone") ctx.addIssue({ code: "custom", path: [i, "type"], message: "the contact's time zone is of type Time zone" });
      const key = keptKeyOf(f);
      if (f.role === "other" && key) {
        if (reservedContactKeys.has(key)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `contact.${key} is the contact's own: name this field otherwise, or give it that role` });
        else if (keys.has(key)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `two fields would both be kept as contact.${key}` });
        keys.add(key);
      }
    }
  });

/** The key a declared field is kept under on the contact (`contact.<key>`), or null when it is not kept. */
export function keptKeyOf(f: Pick<DeclaredField, "name" | "role" | "keep">): string | null {
  if (f.role === "name" || f.role === "company") return f.role;
  if (f.role === "other" && f.keep) return f.name.replaceAll(".", "_");
  return null;
}

/** What the trigger config holds of the contact's fields (the declared roles and the older by-hand paths). */
export interface ContactFieldConfig {
  contactEmailField: string;
  contactTimeZoneField?: string | undefined;
  fields?: DeclaredField[] | undefined;
}

/**
 * The one rule for where the contact's email and zone are in a payload: a declared field with that role, else the
 * path typed by hand (contactEmailField, contactTimeZoneField: automations made before fields were declared).
 */
export function contactPaths(c: ContactFieldConfig): { email: string; timeZone: string | null } {
  const email = c.fields?.find((f) => f.role === "email")?.name ?? c.contactEmailField;
  const timeZone = c.fields?.find((f) => f.role === "time_zone")?.name ?? c.contactTimeZoneField ?? null;
  return { email, timeZone };
}

/** Bounds of what a contact keeps: the database's check allows a little more than these (sql: contacts_attributes_check). */
export const attributeLimits = { keys: 50, keyChars: 64, valueChars: 500 } as const;

export type AttributeValue = string | number | boolean;

/** The value at a dotted path ("lead.email") of a payload, or undefined. */
export function readDottedPath(value: unknown, path: string): unknown {
  let v = value;
  for (const part of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** A payload value as a contact keeps it: text (trimmed, cut to the limit), a number or yes/no; else nothing. */
export function attributeValue(value: unknown): AttributeValue | undefined {
  if (typeof value === "string") {
    const t = value.trim();
    return t === "" ? undefined : t.slice(0, attributeLimits.valueChars);
  }
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "boolean") return value;
  return undefined;
}

/** The attributes a payload gives its contact: name, company and the kept fields it has values for. */
export function contactAttributesOf(fields: DeclaredField[] | undefined, body: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const f of fields ?? []) {
    const key = keptKeyOf(f);
    if (!key || Object.keys(out).length >= attributeLimits.keys) continue;
    const v = attributeValue(readDottedPath(body, f.name));
    if (v !== undefined) out[key.slice(0, attributeLimits.keyChars)] = v;
  }
  return out;
}

/** A sample payload made of the declared fields' examples (nested by their dots), for the picker and previews. */
export function sampleFromFields(fields: DeclaredField[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields ?? []) {
    const parts = f.name.split(".");
    let at = out;
    for (const p of parts.slice(0, -1)) {
      const next = at[p];
      if (next === null || typeof next !== "object") at[p] = {};
      at = at[p] as Record<string, unknown>;
    }
    const example = f.example?.trim() ?? "";
    at[parts.at(-1) as string] = f.type === "number" && example !== "" && Number.isFinite(Number(example)) ? Number(example) : example;
  }
  return out;
}

/** Two samples as one: `over`'s values win where both have one (a delivery's sample over the typed one, say). */
export function mergeSamples(under: unknown, over: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isObject(under)) return over ?? under;
  if (!isObject(over)) return over === undefined || over === null ? under : over;
  const out: Record<string, unknown> = { ...under };
  for (const [k, v] of Object.entries(over)) out[k] = k in under ? mergeSamples(under[k], v) : v;
  return out;
}
