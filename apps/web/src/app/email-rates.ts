/**
 * The one place for an email's rates (issue 43): what each outcome is a share of, and how a share reads. The canvas's
 * counts view, the trigger's and the send step's panels and the run page all read their figures from core's journey
 * counts (the `email` of a send step's node) and put them in words here. Pure: the browser bundles it.
 */

import type { EmailCounts } from "@holdfast/core/run";
import { percent } from "./percent";

/** How many of a send step's messages reached each outcome: journeyCounts' `nodes[node].email` (a type only). */
export type { EmailCounts };

export const emailOutcomeKeys = ["delivered", "bounced", "opened", "clicked", "replied", "unsubscribed"] as const;
export type EmailOutcomeKey = (typeof emailOutcomeKeys)[number];

/**
 * What each outcome is a share of: the receiving mail server takes ("delivered") or refuses what was sent; only a
 * delivered message can be opened, clicked, replied to or unsubscribed from. A message the server took can still
 * bounce later (a bounce notice days after): it stays delivered, as the server did take it, and counts as bounced too,
 * so delivered and bounced can add up to more than all sent. The words say so rather than hiding it in arithmetic:
 * the counts cannot tell a later bounce from a refusal, so no netting would be exact.
 */
export const rateBase: Record<EmailOutcomeKey, "sent" | "delivered"> = {
  delivered: "sent",
  bounced: "sent",
  opened: "delivered",
  clicked: "delivered",
  replied: "delivered",
  unsubscribed: "delivered",
};

export const outcomeWords: Record<EmailOutcomeKey, string> = {
  delivered: "Delivered",
  bounced: "Bounced, at once or later",
  opened: "Opened",
  clicked: "Clicked",
  replied: "Replied",
  unsubscribed: "Unsubscribed",
};

/** One outcome's rate: `n` of `of` (the count of its base), and the ratio (null when there is nothing to divide by). */
export interface EmailRate {
  key: EmailOutcomeKey;
  n: number;
  base: "sent" | "delivered";
  of: number;
  ratio: number | null;
}

export function emailRates(e: EmailCounts): EmailRate[] {
  return emailOutcomeKeys.map((key) => {
    const base = rateBase[key];
    const of = e[base];
    return { key, n: e[key], base, of, ratio: of > 0 ? e[key] / of : null };
  });
}

/** Several send steps' messages together (the automation's "all its emails"). */
export function emailTotal(list: EmailCounts[]): EmailCounts {
  const sum = (k: keyof EmailCounts) => list.reduce((n, e) => n + e[k], 0);
  return { sent: sum("sent"), delivered: sum("delivered"), bounced: sum("bounced"), opened: sum("opened"), clicked: sum("clicked"), replied: sum("replied"), unsubscribed: sum("unsubscribed") };
}

/** "42% (21 of 50)": an outcome's rate with the counts it comes from. */
export function rateWithCounts(r: EmailRate): string {
  return r.of === 0 ? "-" : `${percent(r.n, r.of)} (${r.n} of ${r.of})`;
}
