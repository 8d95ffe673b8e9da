import { describe, expect, it } from "vitest";
import { InvalidGraphError } from "../src/base/errors";
import { parseGraph } from "../src/versions/graph";

const problemsOf = (input: unknown) => {
  try {
    parseGraph(input);
    return [];
  } catch (error) {
    if (!(error instanceof InvalidGraphError)) throw error;
    return error.problems.map((p) => p.message);
  }
};

describe("graph validation on publish", () => {
  it("accepts a valid graph and fills config defaults", () => {
    const g = parseGraph({
      nodes: [
        { id: "t", kind: "trigger" },
        { id: "call", kind: "http_request", config: { url: "https://example.com/hook" } },
        { id: "e", kind: "end" },
      ],
      edges: [
        { from: "t", to: "call" },
        { from: "call", to: "e" },
      ],
    });
    expect(g.nodes[1]).toMatchObject({ config: { method: "POST", timeoutMs: 10_000 } });
  });

  it("refuses unknown kinds, bad ids and non-http URLs with a path", () => {
    expect(problemsOf({ nodes: [{ id: "t", kind: "teleport" }, { id: "e", kind: "end" }], edges: [] }).length).toBeGreaterThan(0);
    expect(problemsOf({ nodes: [{ id: "Bad Id", kind: "trigger" }, { id: "e", kind: "end" }], edges: [] }).join()).toMatch(/slug/);
    expect(
      problemsOf({
        nodes: [{ id: "t", kind: "trigger" }, { id: "c", kind: "http_request", config: { url: "ftp://x/y" } }, { id: "e", kind: "end" }],
        edges: [{ from: "t", to: "c" }, { from: "c", to: "e" }],
      }).join(),
    ).toMatch(/http/);
  });

  it("refuses two triggers, dangling edges, unlabelled branches, unreachable nodes and dead ends", () => {
    expect(problemsOf({ nodes: [{ id: "a", kind: "trigger" }, { id: "b", kind: "trigger" }, { id: "e", kind: "end" }], edges: [] }).join()).toMatch(
      /exactly one trigger/,
    );
    expect(problemsOf({ nodes: [{ id: "t", kind: "trigger" }, { id: "e", kind: "end" }], edges: [{ from: "t", to: "nope" }] }).join()).toMatch(
      /no node "nope"/,
    );
    expect(
      problemsOf({
        nodes: [{ id: "t", kind: "trigger" }, { id: "b", kind: "branch", config: { condition: { path: "input.a", op: "truthy" } } }, { id: "e", kind: "end" }],
        edges: [{ from: "t", to: "b" }, { from: "b", to: "e" }, { from: "b", to: "e" }],
      }).join(),
    ).toMatch(/"true" and one "false"/);
    expect(
      problemsOf({
        nodes: [{ id: "t", kind: "trigger" }, { id: "e", kind: "end" }, { id: "lost", kind: "end" }],
        edges: [{ from: "t", to: "e" }],
      }).join(),
    ).toMatch(/nothing leads to this step from the trigger/);
    expect(
      problemsOf({
        nodes: [
          { id: "t", kind: "trigger" },
          { id: "a", kind: "http_request", config: { url: "http://x/a" } },
          { id: "b", kind: "http_request", config: { url: "http://x/b" } },
          { id: "e", kind: "end" },
          { id: "b2", kind: "branch", config: { condition: { path: "input.a", op: "truthy" } } },
        ],
        edges: [{ from: "t", to: "b2" }, { from: "b2", to: "a", label: "true" }, { from: "b2", to: "e", label: "false" }, { from: "a", to: "b" }, { from: "b", to: "a" }],
      }).join(),
    ).toMatch(/cannot reach an end/);
  });
});

describe("wait nodes on publish", () => {
  const withWait = (config: unknown) => ({
    nodes: [
      { id: "t", kind: "trigger" },
      { id: "w", kind: "wait", config },
      { id: "e", kind: "end" },
    ],
    edges: [
      { from: "t", to: "w" },
      { from: "w", to: "e" },
    ],
  });
  it("refuses an invalid zone with a clear error, and a calendar wait with no zone at all", () => {
    expect(problemsOf(withWait({ rule: { kind: "next_weekday", at: "09:00" }, zone: "Europe/Berlim" })).join()).toMatch(
      /"Europe\/Berlim" is not a time zone \(use an IANA name such as Europe\/Berlin\)/,
    );
    expect(problemsOf(withWait({ rule: { kind: "next_weekday", at: "09:00" } })).join()).toMatch(/needs a time zone: pick one, or where the contact/);
    expect(problemsOf(withWait({ rule: { kind: "next_weekday", at: "25:00" }, zone: "UTC" })).join()).toMatch(/HH:MM/);
  });
  it("accepts a contact zone with a fixed fallback and a spread", () => {
    expect(problemsOf(withWait({ rule: { kind: "next_weekday", at: "09:00" }, zoneFrom: "input.contact.timezone", zone: "Europe/Berlin", spreadSeconds: 600 }))).toEqual([]);
  });
});
