import { afterEach, describe, expect, it, vi } from "vitest";
import { dueInstant, instantOf, isValidZone, spreadOffsetSeconds, waitRuleSchema } from "../src/decide/timers/schedule";

const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString().replace(".000Z", "Z");

// Every expectation is derived by hand from the zone rules; the suite runs with the clock pinned in January and in
// July, because luxon alone resolves an ambiguous local time differently depending on today's date.
describe.each(["2026-01-15T12:00:00Z", "2026-07-15T12:00:00Z"])("with the clock at %s", (clock) => {
  afterEach(() => vi.useRealTimers());
  const pin = () => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date(clock));
  };

  describe("spring gap: moves forward by the length of the gap", () => {
    it.each([
      ["Europe/Berlin", { year: 2026, month: 3, day: 29, hour: 2, minute: 30 }, "2026-03-29T01:30:00Z"], // 03:30 CEST
      ["America/New_York", { year: 2026, month: 3, day: 8, hour: 2, minute: 30 }, "2026-03-08T07:30:00Z"], // 03:30 EDT
      ["Australia/Lord_Howe", { year: 2026, month: 10, day: 4, hour: 2, minute: 15 }, "2026-10-03T15:45:00Z"], // 02:45 +11
    ])("%s", (zone, wall, expected) => {
      pin();
      expect(iso(instantOf(wall, zone))).toBe(expected);
    });
  });

  describe("autumn overlap: takes the first occurrence", () => {
    it.each([
      ["Europe/Berlin", { year: 2026, month: 10, day: 25, hour: 2, minute: 30 }, "2026-10-25T00:30:00Z"], // CEST
      ["America/New_York", { year: 2026, month: 11, day: 1, hour: 1, minute: 30 }, "2026-11-01T05:30:00Z"], // EDT
      ["Australia/Lord_Howe", { year: 2026, month: 4, day: 5, hour: 1, minute: 45 }, "2026-04-04T14:45:00Z"], // +11
    ])("%s", (zone, wall, expected) => {
      pin();
      expect(iso(instantOf(wall, zone))).toBe(expected);
    });
  });

  describe('"next weekday at 09:00" from Friday evening, Saturday and Sunday, across both 2026 switch days', () => {
    const rule = waitRuleSchema.parse({ kind: "next_weekday", at: "09:00" });
    it.each([
      // Europe/Berlin, spring switch on Sunday 29 March: Monday is on CEST (+2)
      ["Europe/Berlin", "2026-03-27T19:00:00Z", "2026-03-30T07:00:00Z"],
      ["Europe/Berlin", "2026-03-28T09:00:00Z", "2026-03-30T07:00:00Z"],
      ["Europe/Berlin", "2026-03-29T08:00:00Z", "2026-03-30T07:00:00Z"],
      // autumn switch on Sunday 25 October: Monday is on CET (+1)
      ["Europe/Berlin", "2026-10-23T18:00:00Z", "2026-10-26T08:00:00Z"],
      ["Europe/Berlin", "2026-10-24T08:00:00Z", "2026-10-26T08:00:00Z"],
      ["Europe/Berlin", "2026-10-25T09:00:00Z", "2026-10-26T08:00:00Z"],
      // America/New_York, spring switch on Sunday 8 March (EDT -4), autumn on Sunday 1 November (EST -5)
      ["America/New_York", "2026-03-07T01:00:00Z", "2026-03-09T13:00:00Z"],
      ["America/New_York", "2026-03-07T15:00:00Z", "2026-03-09T13:00:00Z"],
      ["America/New_York", "2026-03-08T15:00:00Z", "2026-03-09T13:00:00Z"],
      ["America/New_York", "2026-10-31T00:00:00Z", "2026-11-02T14:00:00Z"],
      ["America/New_York", "2026-10-31T15:00:00Z", "2026-11-02T14:00:00Z"],
      ["America/New_York", "2026-11-01T15:00:00Z", "2026-11-02T14:00:00Z"],
      // Australia/Lord_Howe, a 30-minute shift: summer time ends Sunday 5 April (+10:30), starts Sunday 4 October (+11)
      ["Australia/Lord_Howe", "2026-04-03T09:00:00Z", "2026-04-05T22:30:00Z"],
      ["Australia/Lord_Howe", "2026-04-04T00:00:00Z", "2026-04-05T22:30:00Z"],
      ["Australia/Lord_Howe", "2026-04-05T00:00:00Z", "2026-04-05T22:30:00Z"],
      ["Australia/Lord_Howe", "2026-10-02T09:30:00Z", "2026-10-04T22:00:00Z"],
      ["Australia/Lord_Howe", "2026-10-03T00:00:00Z", "2026-10-04T22:00:00Z"],
      ["Australia/Lord_Howe", "2026-10-04T00:00:00Z", "2026-10-04T22:00:00Z"],
    ])("%s from %s", (zone, now, expected) => {
      pin();
      expect(iso(dueInstant(rule, zone, at(now)))).toBe(expected);
    });
  });

  it("a weekday at 09:00 that has not passed yet is today; one that has is the next weekday", () => {
    pin();
    const rule = waitRuleSchema.parse({ kind: "next_weekday", at: "09:00" });
    expect(iso(dueInstant(rule, "Europe/Berlin", at("2026-03-24T07:59:00Z")))).toBe("2026-03-24T08:00:00Z");
    expect(iso(dueInstant(rule, "Europe/Berlin", at("2026-03-24T08:00:00Z")))).toBe("2026-03-25T08:00:00Z");
  });

  it("a repeated local time whose first occurrence has passed takes the second, not tomorrow's", () => {
    pin();
    const sunday0230 = waitRuleSchema.parse({ kind: "next_weekdays", days: [7], at: "02:30" });
    // Berlin, 2026-10-25 02:10 CET (01:10Z): 02:30 CEST (00:30Z) has passed, 02:30 CET (01:30Z) is still ahead.
    expect(iso(dueInstant(sunday0230, "Europe/Berlin", at("2026-10-25T01:10:00Z")))).toBe("2026-10-25T01:30:00Z");
    expect(iso(dueInstant(sunday0230, "Europe/Berlin", at("2026-10-25T00:10:00Z")))).toBe("2026-10-25T00:30:00Z");
  });

  it("refuses a local date that is not on the calendar", () => {
    expect(waitRuleSchema.safeParse({ kind: "local_datetime", at: "2026-02-31T09:00" }).success).toBe(false);
    expect(waitRuleSchema.safeParse({ kind: "local_datetime", at: "2026-13-01T09:00" }).success).toBe(false);
    expect(waitRuleSchema.safeParse({ kind: "local_datetime", at: "2028-02-29T09:00" }).success).toBe(true);
  });

  it("chosen weekdays, a fixed local date-time and a duration", () => {
    pin();
    const tueThu = waitRuleSchema.parse({ kind: "next_weekdays", days: [2, 4], at: "18:30" });
    expect(iso(dueInstant(tueThu, "America/New_York", at("2026-11-25T12:00:00Z")))).toBe("2026-11-26T23:30:00Z");
    const fixed = waitRuleSchema.parse({ kind: "local_datetime", at: "2026-12-24T17:00" });
    expect(iso(dueInstant(fixed, "Europe/Berlin", at("2026-11-29T00:00:00Z")))).toBe("2026-12-24T16:00:00Z");
    const duration = waitRuleSchema.parse({ kind: "duration", seconds: 90 });
    expect(iso(dueInstant(duration, "UTC", at("2026-11-29T00:00:00Z")))).toBe("2026-11-29T00:01:30Z");
  });
});

describe("zones and spread", () => {
  it("knows IANA zones and refuses made-up ones", () => {
    expect(isValidZone("Australia/Lord_Howe")).toBe(true);
    expect(isValidZone("Mars/Olympus")).toBe(false);
  });

  it("spreads by hash(run id) mod window: deterministic, inside the window, and spread out", () => {
    expect(spreadOffsetSeconds("run_a", 600)).toBe(spreadOffsetSeconds("run_a", 600));
    expect(spreadOffsetSeconds("run_a", 0)).toBe(0);
    const minutes = new Array(10).fill(0);
    for (let i = 0; i < 10_000; i++) minutes[Math.floor(spreadOffsetSeconds(`run_${i}`, 600) / 60)]++;
    for (const n of minutes) expect(n).toBeGreaterThan(850); // about 1,000 per minute
  });
});
