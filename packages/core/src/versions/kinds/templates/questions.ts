import { z } from "zod";
import type { FieldSpec } from "../../forms/fields";
import type { DeclaredField } from "../declared-fields";

/**
 * The questions several templates ask, as form fields with the step forms' widgets and the zod rules that check
 * the answers (messages say what to do). An answer written into a template's text must not open a {{variable}}.
 */
export const pickConnection = (words: string) => z.string({ error: `Pick ${words}` }).trim().min(1, `Pick ${words}`).max(100);

const plainText = (what: string, example: string) =>
  z
    .string({ error: `Say ${what}, such as ${example}` })
    .trim()
    .min(1, `Say ${what}, such as ${example}`)
    .max(100, "At most 100 characters")
    .regex(/^[^{}]*$/, "Write it without { or }");

export const mailAnswer = pickConnection("the mailbox the emails go out through");
export const senderAnswer = plainText("who signs the emails", "Sam at Acme");
export const productAnswer = plainText("what the emails call your company or product", "Acme");

export const mailField: FieldSpec = {
  name: "mail",
  label: "Send the emails through",
  help: "The mailbox (SMTP connection) the emails go out from; its address is the sender's.",
  required: true,
  widget: { type: "connection", kind: "smtp" },
};
export const senderField: FieldSpec = {
  name: "sender",
  label: "Sign the emails as",
  help: "The name under each email, such as Sam at Acme.",
  required: true,
  widget: { type: "text", placeholder: "Sam at Acme" },
};
export const productField: FieldSpec = {
  name: "product",
  label: "Your company or product",
  help: "As the emails name it, such as Acme.",
  required: true,
  widget: { type: "text", placeholder: "Acme" },
};

/** The fields the webhook's sender posts, with examples (they make the sample a test run starts from). */
export const contactFields: DeclaredField[] = [
  { name: "id", type: "text", example: "evt_0001", role: "other" },
  { name: "email", type: "email", example: "lena@example.com", role: "email" },
  { name: "name", type: "text", example: "Lena", role: "name" },
  { name: "timezone", type: "time_zone", example: "Europe/Berlin", role: "time_zone" },
];
