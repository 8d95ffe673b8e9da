import { describe, expect, it } from "vitest";
import {
  daysWords,
  isOpen,
  nextOpening,
  quietHoursSentence,
  quietHoursWords,
  quietOverrideSchema,
  quietWindowInForce,
  quietWindowSchema,
  type QuietWindow,
} from "../src/people/sending-rules/quiet-hours";
import { storyClock } from "../src/run/runs/story";
import { latestHold } from "../src/run/runs/story-holds";

/** Quiet hours, pure (issue 44): the window, the next opening across DST changes, the spread and the words. */

const weekdays: QuietWindow = { days: [1, 2, 3, 4, 5], start: "08:00", end: "20:00", spreadMinutes: 0 };
const everyDay: QuietWindow = { ...weekdays, days: [1, 2, 3, 4, 5, 6, 7] };
const at = (iso: string) => new Date(iso);

describe("quiet hours: the next opening", () => {
  it("a send due at 22:00 contact time waits to 08:00 the next day", () => {
    // Tue 1 Dec 2026 22:00 Europe/Berlin (21:00Z) -> Wed 2 Dec 08:00 Berlin = 07:00Z.
    const now = at("2026-12-01T21:00:00Z");
    expect(isOpen(weekdays, "Europe/Berlin", now)).toBe(false);
    expect(nextOpening(weekdays, "Europe/Berlin", now, "run_1")).toEqual({ opening: at("2026-12-02T07:00:00Z"), at: at("2026-12-02T07:00:00Z"), spreadOffsetSeconds: 0 });
  });

  it("across the spring change in the contact's zone: New York 2026-03-07 22:00 EST -> 03-08 08:00 EDT = 12:00Z", () => {
    const now = at("2026-03-08T03:00:00Z"); // Sat 7 Mar 22:00 EST (UTC-5)
    expect(isOpen(everyDay, "America/New_York", now)).toBe(false);
    expect(nextOpening(everyDay, "America/New_York", now, "run_1").opening).toEqual(at("2026-03-08T12:00:00Z"));
  });

  it("across the autumn change: Paris 2026-10-24 22:00 CEST -> 10-25 08:00 CET = 07:00Z", () => {
    const now = at("2026-10-24T20:00:00Z"); // Sat 24 Oct 22:00 CEST (UTC+2)
    expect(isOpen(everyDay, "Europe/Paris", now)).toBe(false);
    expect(nextOpening(everyDay, "Europe/Paris", now, "run_1").opening).toEqual(at("2026-10-25T07:00:00Z"));
  });

  it("skips the days not allowed: Friday 21:00 waits to Monday 08:00", () => {
    const now = at("2026-12-04T21:00:00Z"); // Fri 4 Dec, UTC
    expect(nextOpening(weekdays, "UTC", now, "run_1").opening).toEqual(at("2026-12-07T08:00:00Z"));
    // Saturday noon is inside the hours but not on an allowed day.
    expect(isOpen(weekdays, "UTC", at("2026-12-05T12:00:00Z"))).toBe(false);
    expect(nextOpening(weekdays, "UTC", at("2026-12-05T12:00:00Z"), "run_1").opening).toEqual(at("2026-12-07T08:00:00Z"));
  });

  it("a start inside the spring gap moves forward by the gap (02:30 -> 03:30 CEST), as waits do", () => {
    const night: QuietWindow = { days: [7], start: "02:30", end: "06:00", spreadMinutes: 0 };
    // Sun 29 Mar 2026: Berlin jumps 02:00 CET -> 03:00 CEST. 02:30 never happens: 03:30 CEST = 01:30Z.
    const now = at("2026-03-28T23:00:00Z"); // 00:00 CET
    expect(nextOpening(night, "Europe/Berlin", now, "run_1").opening).toEqual(at("2026-03-29T01:30:00Z"));
  });

  it("a start inside the autumn overlap takes its first occurrence (still summer time)", () => {
    const night: QuietWindow = { days: [7], start: "02:30", end: "06:00", spreadMinutes: 0 };
    // Sun 25 Oct 2026: Berlin falls back 03:00 CEST -> 02:00 CET; 02:30 happens at 00:30Z and 01:30Z.
    expect(nextOpening(night, "Europe/Berlin", at("2026-10-24T22:00:00Z"), "run_1").opening).toEqual(at("2026-10-25T00:30:00Z"));
  });

  it("sends inside the window go at once; the window's end is exclusive, its start inclusive", () => {
    expect(isOpen(weekdays, "Europe/Paris", at("2026-12-01T07:00:00Z"))).toBe(true); // 08:00 Paris
    expect(isOpen(weekdays, "Europe/Paris", at("2026-12-01T06:59:00Z"))).toBe(false);
    expect(isOpen(weekdays, "Europe/Paris", at("2026-12-01T18:59:59Z"))).toBe(true);
    expect(isOpen(weekdays, "Europe/Paris", at("2026-12-01T19:00:00Z"))).toBe(false); // 20:00 Paris
    expect(isOpen({ ...weekdays, end: "24:00" }, "UTC", at("2026-12-01T23:59:00Z"))).toBe(true);
  });

  it("spread: the same run always gets the same offset, inside the spread and inside the window", () => {
    const spread: QuietWindow = { ...weekdays, spreadMinutes: 30 };
    const now = at("2026-12-01T21:00:00Z");
    const offsets = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const a = nextOpening(spread, "UTC", now, `run_${i}`);
      expect(nextOpening(spread, "UTC", now, `run_${i}`)).toEqual(a);
      expect(a.spreadOffsetSeconds).toBeGreaterThanOrEqual(0);
      expect(a.spreadOffsetSeconds).toBeLessThan(30 * 60);
      expect(a.at.getTime() - a.opening.getTime()).toBe(a.spreadOffsetSeconds * 1000);
      expect(isOpen(spread, "UTC", a.at)).toBe(true);
      offsets.add(a.spreadOffsetSeconds);
    }
    expect(offsets.size).toBeGreaterThan(150); // spread, not bunched
    // A spread longer than the window is clamped to it: a 10-minute window with 12 hours of spread still lands inside.
    const short: QuietWindow = { days: [2], start: "08:00", end: "08:10", spreadMinutes: 720 };
    for (let i = 0; i < 100; i++) expect(isOpen(short, "UTC", nextOpening(short, "UTC", now, `r${i}`).at)).toBe(true);
  });
});

describe("quiet hours: the setting", () => {
  it("validates the window and says what is wrong", () => {
    expect(quietWindowSchema.safeParse(weekdays).success).toBe(true);
    const backwards = quietWindowSchema.safeParse({ ...weekdays, start: "20:00", end: "08:00" });
    expect(backwards.error?.issues[0]?.message).toMatch(/must open before it closes/);
    expect(quietWindowSchema.safeParse({ ...weekdays, days: [] }).error?.issues[0]?.message).toMatch(/at least one day/);
    expect(quietWindowSchema.safeParse({ ...weekdays, days: [1, 1] }).error?.issues[0]?.message).toBe("each day once");
    expect(quietWindowSchema.safeParse({ ...weekdays, days: [8] }).success).toBe(false);
    expect(quietWindowSchema.safeParse({ ...weekdays, start: "8:00" }).error?.issues[0]?.message).toMatch(/HH:MM/);
    expect(quietWindowSchema.safeParse({ ...weekdays, spreadMinutes: 721 }).success).toBe(false);
    expect(quietWindowSchema.safeParse({ ...weekdays, extra: 1 }).success).toBe(false);
    expect(quietWindowSchema.safeParse({ ...weekdays, zone: "America/New_York" }).success).toBe(true);
    expect(quietHoursSentence({ ...weekdays, zone: "America/New_York" })).toContain("(America/New_York when the contact has none)");
    expect(quietWindowSchema.safeParse({ ...weekdays, zone: "Mars/Olympus" }).error?.issues[0]?.message).toMatch(/time zone for contacts without one/);
    expect(quietOverrideSchema.safeParse(null).success).toBe(true);
    expect(quietOverrideSchema.safeParse({ off: true }).success).toBe(true);
    expect(quietOverrideSchema.safeParse({ off: false }).success).toBe(false);
  });

  it("the rule in force: the automation's own, none when it turned them off, else the organisation's", () => {
    const own = { ...weekdays, start: "09:00" };
    expect(quietWindowInForce(null, weekdays)).toEqual({ window: weekdays, source: "organisation" });
    expect(quietWindowInForce({ off: true }, weekdays)).toEqual({ window: null, source: "none" });
    expect(quietWindowInForce(own, weekdays)).toEqual({ window: own, source: "automation" });
    expect(quietWindowInForce(null, null)).toEqual({ window: null, source: "none" });
    expect(quietWindowInForce(null, { days: "junk" }).problem).toMatch(/organisation's quiet hours are not valid/);
  });

  it("in words", () => {
    expect(daysWords([1, 2, 3, 4, 5])).toBe("Mon-Fri");
    expect(daysWords([1, 3, 5])).toBe("Mon, Wed, Fri");
    expect(daysWords([6, 1, 2, 3, 7])).toBe("Mon-Wed, Sat, Sun");
    expect(daysWords([1, 2, 3, 4, 5, 6, 7])).toBe("every day");
    expect(quietHoursWords(weekdays)).toBe("quiet hours: sends go out Mon-Fri 08:00-20:00");
    expect(quietHoursWords({ ...weekdays, spreadMinutes: 30 })).toBe("quiet hours: sends go out Mon-Fri 08:00-20:00, held sends spread over the first 30 minutes");
    expect(quietHoursSentence(weekdays)).toMatch(/^Emails go out Mon-Fri from 08:00 to 20:00 in each contact's time zone/);
    expect(quietHoursSentence(null)).toMatch(/^No quiet hours/);
  });
});

describe("a held send on the run page", () => {
  const clock = storyClock("America/Los_Angeles", "Europe/Paris");
  const deferred = (data: Record<string, unknown>) => ({ at: at("2026-12-05T21:00:00Z"), type: "step.deferred", stepId: "s", nodeId: "send", attempt: 1, worker: "w", data });
  it("reads from the latest step.deferred row's hold, in the hold's zone whoever looks; any rule's words", () => {
    const quiet = { rule: "quiet_hours", until: "2026-12-07T07:00:00.000Z", zone: "Europe/Paris", zoneSource: "the contact's stored time zone", words: "quiet hours: sends go out Mon-Fri 08:00-20:00" };
    expect(latestHold([deferred({ reason: "busy", delayMs: 10 }), deferred({ reason: "x", delayMs: 1, hold: quiet })], clock)?.text).toBe(
      "until Mon 7 Dec 08:00 in the contact's zone (Europe/Paris): quiet hours: sends go out Mon-Fri 08:00-20:00",
    );
    // A busy connection's deferral after it holds nothing.
    expect(latestHold([deferred({ reason: "x", delayMs: 1, hold: quiet }), deferred({ reason: "busy", delayMs: 10 })], clock)).toBeNull();
    const cap = { rule: "frequency_cap", until: "2026-12-06T09:00:00.000Z", zone: null, zoneSource: null, words: "frequency cap: at most 1 email a day" };
    expect(latestHold([deferred({ reason: "x", delayMs: 1, hold: cap })], clock)?.text).toBe(`until ${clock.when(at("2026-12-06T09:00:00Z"))}: frequency cap: at most 1 email a day`);
    const utc = { ...quiet, zone: "UTC", zoneSource: "no time zone is known for the contact" };
    expect(latestHold([deferred({ hold: utc })], clock)?.text).toBe("until Mon 7 Dec 07:00 UTC (no time zone is known for the contact): quiet hours: sends go out Mon-Fri 08:00-20:00");
  });
});
