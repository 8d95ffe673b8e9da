import { z } from "zod";
import { contactFields, mailAnswer, mailField, productAnswer, productField, senderAnswer, senderField } from "./questions";
import { defineTemplate, layOut } from "./template";

/**
 * Wins back contacts who went quiet. Holdfast does not watch activity itself: the run starts when the CRM or the
 * product reports a contact with no activity for 30 days (a saved view or a nightly job posting each such contact
 * to the webhook, its event id naming the contact and the quiet spell, so a repeat starts no second run). A reply
 * takes the "reply" path; a click on the email's link meets the automation's goal ("clicked a link"), which ends
 * the run as won back; neither within 7 days sends one last note.
 */
const answers = z.object({
  mail: mailAnswer,
  sender: senderAnswer,
  product: productAnswer,
  link: z
    .string({ error: "Give the address the email's link opens, such as https://app.acme.com/login" })
    .trim()
    .regex(/^https:\/\/[^\s{}]+$/, "Give the address the email's link opens, starting with https://, such as https://app.acme.com/login")
    .max(500),
});

export const reEngagement = defineTemplate({
  id: "re-engagement",
  name: "Re-engagement",
  purpose: "Win back contacts with no activity for 30 days: one email, then a reply or a click decides.",
  steps: [
    "Your CRM or product reports a contact with no activity for 30 days (webhook)",
    "Send a we-miss-you email with a link back",
    "Wait up to 7 days for a reply",
    "A reply: end as answered. A click on the link: the goal is met and the run ends as won back",
    "Neither: send one last note, then end",
  ],
  note: "Holdfast does not watch activity itself: have your CRM or product post each contact quiet for 30 days to the automation's webhook (a saved view or a nightly job), with a unique id for each contact and quiet period, so nobody is started twice. A click on the email's link ends the run as won back (the automation's goal is \"clicked a link\").",
  suggestedName: "Re-engagement",
  goal: "clicked",
  fields: [
    mailField,
    senderField,
    productField,
    { name: "link", label: "Link back to", help: "Where the email's link takes them, such as your app's sign-in page. A click on it ends the run as won back.", required: true, widget: { type: "text", format: "url", placeholder: "https://app.acme.com/login" } },
  ],
  answers,
  defaults: {},
  graph: (a) =>
    layOut(
      [
        [{ id: "trigger", kind: "trigger", name: "Quiet for 30 days" }],
        [{ id: "miss_you", kind: "send_email", name: "We miss you" }],
        [{ id: "reply", kind: "wait_for_reply", name: "Wait for a reply or a click" }],
        [
          { id: "answered", kind: "end", name: "Answered" },
          { id: "last_note", kind: "send_email", name: "One last note" },
        ],
        [{ id: "still_quiet", kind: "end", name: "Still quiet" }],
      ],
      {
        trigger: { fields: [...contactFields, { name: "last_active", type: "date", example: "2026-10-01", role: "other" }] },
        miss_you: {
          connection: a.mail,
          subject: `We miss you at ${a.product}`,
          text: `Hi {{contact.name}},\n\nWe have not seen you at ${a.product} for a while. Here is what is new since you last came by:\n\n${a.link}\n\nOr reply and tell us what would make it worth your time.\n\n${a.sender}`,
        },
        reply: { replyTo: "miss_you", timeoutSeconds: 7 * 86_400 },
        last_note: {
          connection: a.mail,
          subject: `Should we stop writing, {{contact.name}}?`,
          text: `Hi {{contact.name}},\n\nWe will not fill your inbox: this is our last note for now. ${a.product} is here when you want it:\n\n${a.link}\n\n${a.sender}`,
        },
      },
      [
        { from: "trigger", to: "miss_you" },
        { from: "miss_you", to: "reply" },
        { from: "reply", to: "answered", label: "reply" },
        { from: "reply", to: "last_note", label: "timeout" },
        { from: "last_note", to: "still_quiet" },
      ],
    ),
});
