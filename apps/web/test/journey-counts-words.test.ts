import { wilson } from "@holdfast/core/decide";
import { describe, expect, it } from "vitest";
import { emailFigures, foldLag, pathOutcome, runsAtHeading, runsAtHref } from "../src/app/automations/[id]/canvas/counts-model";
import { emailRates, emailTotal, rateWithCounts } from "../src/app/email-rates";
import { percent, share } from "../src/app/percent";
import { minPathRuns, scoreSplits } from "../src/server/journey-scores";

/** The counts view's words: rates, the email figures' bases, the split paths' outcomes, the runs list's heading. */
describe("the counts in words", () => {
  it("puts a rate as people read it, and nothing to divide by as a dash", () => {
    expect([percent(0, 10), percent(10, 10), percent(1, 3), percent(1, 30), percent(5, 0)]).toEqual(["0%", "100%", "33%", "3.3%", "-"]);
    // One precision wherever a share is shown: the goal panel's conversion reads as the counts panel's does.
    expect(percent(40, 120)).toBe("33%");
    // Wilson's low end for 0 successes is a hair above 0 in floating point; 9.97% rounds to 10%, not "10.0%".
    expect([share(wilson(0, 100).low), share(0.0997), share(0.0994)]).toEqual(["0%", "10%", "9.9%"]);
  });

  it("rates delivered and bounced of sent, and the rest of delivered", () => {
    const figures = emailFigures({ sent: 200, delivered: 180, bounced: 20, opened: 90, clicked: 18, replied: 9, unsubscribed: 2 });
    expect(figures.map((f) => [f.label, f.n, f.rate, f.of])).toEqual([
      ["Sent", 200, null, null],
      ["Delivered", 180, "90%", "of sent"],
      ["Bounced, at once or later", 20, "10%", "of sent"],
      ["Opened", 90, "50%", "of delivered"],
      ["Clicked", 18, "10%", "of delivered"],
      ["Replied", 9, "5.0%", "of delivered"],
      ["Unsubscribed", 2, "1.1%", "of delivered"],
    ]);
  });

  it("the panels' rates are the same arithmetic: each outcome of its base, with the counts, and a dash with nothing sent", () => {
    const e = { sent: 50, delivered: 40, bounced: 10, opened: 20, clicked: 3, replied: 0, unsubscribed: 1 };
    expect(emailRates(e).map((r) => [r.key, r.base, rateWithCounts(r)])).toEqual([
      ["delivered", "sent", "80% (40 of 50)"],
      ["bounced", "sent", "20% (10 of 50)"],
      ["opened", "delivered", "50% (20 of 40)"],
      ["clicked", "delivered", "7.5% (3 of 40)"],
      ["replied", "delivered", "0% (0 of 40)"],
      ["unsubscribed", "delivered", "2.5% (1 of 40)"],
    ]);
    // The canvas shows the same share for each outcome as the panels.
    expect(emailFigures(e).slice(1).map((f) => f.rate)).toEqual(emailRates(e).map((r) => percent(r.n, r.of)));
    const none = { sent: 0, delivered: 0, bounced: 0, opened: 0, clicked: 0, replied: 0, unsubscribed: 0 };
    expect(emailRates(none).map((r) => [r.ratio, rateWithCounts(r)])).toEqual(Array.from({ length: 6 }, () => [null, "-"]));
    // Several steps together: every count summed, then rated the same way.
    expect(emailTotal([e, { ...e, sent: 10, delivered: 10, bounced: 0 }])).toEqual({ sent: 60, delivered: 50, bounced: 10, opened: 40, clicked: 6, replied: 0, unsubscribed: 2 });
  });

  it("scores each path with its Wilson interval, says 'not enough data yet' below the minimum, and caps a window's outcomes at the path's runs", () => {
    const scored = scoreSplits({
      pick: {
        paths: [
          { path: "A", n: 120, replied: 30, clicked: 12, converted: 3 },
          { path: "B", n: minPathRuns - 1, replied: 5, clicked: 0, converted: 0 },
          { path: "C", n: 40, replied: 41, clicked: 0, converted: 0 },
        ],
      },
    });
    const [a, b, c] = scored.pick ?? [];
    expect(a?.goals.replied).toEqual({ reached: 30, ...wilson(30, 120) });
    expect(a?.enough).toBe(true);
    expect(pathOutcome(a as NonNullable<typeof a>, "replied", minPathRuns)).toEqual({ rate: "25%", interval: `95% sure: ${Math.round(wilson(30, 120).low * 100)}% to ${Math.round(wilson(30, 120).high * 100)}%` });
    expect(pathOutcome(b as NonNullable<typeof b>, "replied", minPathRuns)).toEqual({ rate: "Not enough data yet", interval: `${minPathRuns - 1} of the ${minPathRuns} runs needed` });
    expect(c?.goals.replied.reached).toBe(40);
  });

  it("heads the runs behind a count in words and links to them", () => {
    expect(runsAtHeading("now", "Send the email", 12)).toBe('Runs at "Send the email" now (12)');
    expect(runsAtHeading("passed", "Send the email", 1_204)).toBe('Runs that passed through "Send the email" (1,204)');
    // A run that met the goal at a wait converted there: not "stopped", which reads as if something went wrong.
    expect(runsAtHeading("converted", "Wait for a reply", 26)).toBe('Runs that converted at "Wait for a reply" (26)');
    expect(runsAtHeading("cancelled", "Wait for a reply", 2)).toBe('Runs stopped at "Wait for a reply" (2)');
    expect(runsAtHref({ orgSlug: "acme", automationSlug: "welcome", version: 3, window: "7d", nodeId: "send", bucket: "failed" })).toBe(
      "/?org=acme&automation=welcome&at=send&state=failed&window=7d&version=3",
    );
  });

  it("says the fold lags only when changes have waited over a minute", () => {
    const now = new Date("2026-12-05T10:00:00Z");
    const clock = (d: Date) => d.toISOString().slice(11, 16);
    expect(foldLag({ pendingChanges: 0, foldedAt: new Date("2026-12-05T09:00:00Z") }, now, clock)).toBeNull();
    expect(foldLag({ pendingChanges: 40, foldedAt: new Date("2026-12-05T09:59:30Z") }, now, clock)).toBeNull();
    expect(foldLag({ pendingChanges: 4_000, foldedAt: new Date("2026-12-05T09:40:00Z") }, now, clock)).toBe(
      "4,000 changes since 09:40 are still waiting to be tallied; the counts include them.",
    );
  });
});
