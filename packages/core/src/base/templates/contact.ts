/**
 * The run's contact as templates see it (`{{contact.email}}`, `{{contact.name}}`, `{{contact.company}}`,
 * `{{contact.<kept field>}}`): its attributes, then its own facts over them. Name and company are always there
 * (empty when unknown), so a template that greets by name renders for a contact nobody named yet; a kept field the
 * contact has no value for is missing, as a payload field is. Pure.
 */
export function templateContact(c: {
  id: string;
  email: string;
  timeZone: string | null;
  consent: string;
  attributes?: Record<string, unknown> | null;
}): TemplateContact {
  return { name: null, company: null, ...(c.attributes ?? {}), id: c.id, email: c.email, time_zone: c.timeZone, consent: c.consent };
}

export interface TemplateContact {
  [key: string]: unknown;
  id: string;
  email: string;
  time_zone: string | null;
  consent: string;
}
