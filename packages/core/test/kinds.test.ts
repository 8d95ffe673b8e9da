import { describe, expect, it } from "vitest";
import { allKinds, payloadPaths, ruleWords, variablesAt, zoneWords } from "../src/versions/kinds";
import { kindOf } from "../src/versions/kinds/registry";
import { previewWait } from "../src/decide/timers/preview";

describe("kind modules", () => {
  it("every built-in kind has a label, an icon, a description, fields that name real config keys, and defaults", () => {
    for (const k of allKinds()) {
      expect(k.label.length, k.kind).toBeGreaterThan(2);
      expect(k.icon.length, k.kind).toBeGreaterThan(0);
      expect(k.description, k.kind).toMatch(/\.$/);
      for (const f of k.fields) expect(f.label, `${k.kind}.${f.name}`).not.toBe("");
    }
  });

  it("summaries are one line of plain words", () => {
    const wait = kindOf("wait");
    const parsed = wait?.config.parse({ rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.tz", zone: "Europe/Berlin" });
    expect(wait?.summary(parsed)).toBe("Wait until 09:00 on the next weekday in the contact's time zone (input.tz), else Europe/Berlin");
    const approval = kindOf("approval");
    expect(approval?.summary(approval.config.parse({ approvers: { users: ["sam@acme.test"] }, title: "Send?", content: "x", deadlineSeconds: 86_400 }))).toBe(
      "Ask sam@acme.test within 1 day",
    );
    expect(ruleWords({ kind: "next_weekdays", days: [3, 1], at: "08:30" })).toBe("until 08:30 on the next Monday or Wednesday");
    expect(ruleWords({ kind: "duration", seconds: 93_600 })).toBe("for 1 day 2 hours");
    expect(zoneWords({ zone: "Asia/Tokyo" })).toBe("in Asia/Tokyo");
  });
});

describe("the variable picker's list", () => {
  const graph = {
    nodes: [
      { id: "trigger", kind: "trigger" },
      { id: "draft", kind: "model_draft" },
      { id: "review", kind: "approval" },
      { id: "send", kind: "send_email" },
      { id: "reply", kind: "wait_for_reply" },
      { id: "crm", kind: "crm_upsert" },
      { id: "nudge", kind: "send_email" },
      { id: "end", kind: "end" },
    ],
    edges: [
      { from: "trigger", to: "draft" },
      { from: "draft", to: "review" },
      { from: "review", to: "send", label: "approved" },
      { from: "review", to: "end", label: "rejected" },
      { from: "send", to: "reply" },
      { from: "reply", to: "crm", label: "reply" },
      { from: "reply", to: "nudge", label: "timeout" },
      { from: "nudge", to: "crm" },
      { from: "crm", to: "end" },
    ],
  };

  it("lists the payload from the sample, the contact, and only steps that run on every path here", () => {
    const paths = variablesAt(graph, "crm", { email: "maya@example.com", company: { name: "Lumen" }, tags: ["a"] }).map((v) => v.path);
    expect(paths).toEqual(expect.arrayContaining(["input.email", "input.company.name", "input.tags", "contact.email", "steps.draft.output.text", "steps.reply.output.outcome"]));
    // The nudge only runs on the timeout path: not offered at crm.
    expect(paths.some((p) => p.startsWith("steps.nudge."))).toBe(false);
    // A step never offers its own output.
    expect(variablesAt(graph, "draft", {}).some((v) => v.path.startsWith("steps.draft."))).toBe(false);
  });

  it("flattens a sample payload with examples, bounded", () => {
    expect(payloadPaths({ a: { b: 1 }, c: "x".repeat(100) })).toEqual([
      { path: "input.a.b", example: "1" },
      { path: "input.c", example: `${"x".repeat(59)}…` },
    ]);
    const wide = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`k${i}`, i]));
    expect(payloadPaths(wide)).toHaveLength(200);
  });
});

describe("the wait rule's preview", () => {
  it("gives the next three weekday 09:00s in the zone, skipping the weekend", () => {
    const at = previewWait({ kind: "next_weekday", at: "09:00" }, "Europe/Berlin", new Date("2026-12-04T10:00:00Z")); // a Friday
    expect(at.map((p) => p.at)).toEqual(["2026-12-07T08:00:00.000Z", "2026-12-08T08:00:00.000Z", "2026-12-09T08:00:00.000Z"]);
    expect(at[0]?.local).toMatch(/^Mon 7 Dec 2026, 09:00/);
    expect(at.every((p) => p.clockChange === undefined)).toBe(true);
  });

  it("notes a daylight-saving change between two instants", () => {
    // Berlin springs forward on Sunday 29 March 2026: Friday 27th is UTC+1, Monday 30th UTC+2.
    const at = previewWait({ kind: "next_weekday", at: "09:00" }, "Europe/Berlin", new Date("2026-03-26T12:00:00Z"));
    expect(at.map((p) => p.at)).toEqual(["2026-03-27T08:00:00.000Z", "2026-03-30T07:00:00.000Z", "2026-03-31T07:00:00.000Z"]);
    expect(at[0]?.clockChange).toBeUndefined();
    expect(at[1]?.clockChange).toBe("the clocks in Europe/Berlin change before this (UTC+01:00 to UTC+02:00)");
  });
});
