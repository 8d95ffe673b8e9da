import { z } from "zod";
import { contactFields, mailAnswer, mailField, productAnswer, productField, senderAnswer, senderField } from "./questions";
import { defineTemplate, layOut } from "./template";

const day = 86_400;

/** Three emails over a week to each new sign-up: at once, on day 3 and on day 7. */
const answers = z.object({ mail: mailAnswer, sender: senderAnswer, product: productAnswer });

export const welcomeSeries = defineTemplate({
  id: "welcome-series",
  name: "Welcome series",
  purpose: "Greet each new sign-up with three emails over their first week.",
  steps: ["A sign-up arrives by webhook", "Send the welcome email at once", "Wait 3 days", "Send a getting-started email", "Wait 4 days", "Send a one-week check-in", "End"],
  note: "Starts when your sign-up form or product posts the new customer (email, name, time zone) to the automation's webhook address. Edit each email's words in the editor.",
  suggestedName: "Welcome series",
  fields: [mailField, senderField, productField],
  answers,
  defaults: {},
  graph: (a) =>
    layOut(
      [
        [{ id: "trigger", kind: "trigger", name: "A sign-up arrives" }],
        [{ id: "welcome", kind: "send_email", name: "Welcome email" }],
        [{ id: "wait_day_3", kind: "wait", name: "Wait 3 days" }],
        [{ id: "getting_started", kind: "send_email", name: "Getting-started email" }],
        [{ id: "wait_day_7", kind: "wait", name: "Wait 4 more days" }],
        [{ id: "check_in", kind: "send_email", name: "One-week check-in" }],
        [{ id: "done", kind: "end", name: "Done" }],
      ],
      {
        trigger: { fields: contactFields },
        welcome: {
          connection: a.mail,
          subject: `Welcome to ${a.product}`,
          text: `Hi {{contact.name}},\n\nWelcome to ${a.product}, and thank you for signing up. Over the next week we will send you two short notes to help you get going.\n\n${a.sender}`,
        },
        wait_day_3: { rule: { kind: "duration", seconds: 3 * day } },
        getting_started: {
          connection: a.mail,
          subject: `Getting started with ${a.product}`,
          text: `Hi {{contact.name}},\n\nHere is the one thing most people set up first in ${a.product}, and why it helps. If anything is unclear, just reply to this email.\n\n${a.sender}`,
        },
        wait_day_7: { rule: { kind: "duration", seconds: 4 * day } },
        check_in: {
          connection: a.mail,
          subject: `Your first week with ${a.product}`,
          text: `Hi {{contact.name}},\n\nYou have had ${a.product} for a week now. How is it going? Reply and tell us: a person reads every answer.\n\n${a.sender}`,
        },
      },
      [
        { from: "trigger", to: "welcome" },
        { from: "welcome", to: "wait_day_3" },
        { from: "wait_day_3", to: "getting_started" },
        { from: "getting_started", to: "wait_day_7" },
        { from: "wait_day_7", to: "check_in" },
        { from: "check_in", to: "done" },
      ],
    ),
});
