import { describe, expect, it } from "vitest";
import { copySteps, pasteSteps } from "../src/app/automations/[id]/canvas/clipboard";
import { bridgesOver, connectAfter, insertOnEdge } from "../src/app/automations/[id]/canvas/graph-edit";
import { edgeOf, type FlowNode } from "../src/app/automations/[id]/canvas/graph-model";
import { neighbour } from "../src/app/automations/[id]/canvas/navigate";
import { retryDelayMs, saveOutcome } from "../src/app/automations/[id]/canvas/save-outcome";
import { boundsOf, fitReadable, readableMinZoom, tidyLayout } from "../src/app/automations/layout-graph";

const step = (id: string, kind: string, config: unknown = {}, x = 0, y = 0): FlowNode => ({ id, type: "step", position: { x, y }, data: { kind, config, problems: [] } });
const ids = (edges: { source: string; target: string; sourceHandle?: string | null }[]) => edges.map((e) => `${e.source}-${e.sourceHandle ?? ""}->${e.target}`).sort();

describe("the canvas's wiring edits", () => {
  it("puts a step on an edge (source -> new -> target); a step with several outputs continues on its first", () => {
    const edges = [edgeOf("a", "b", null), edgeOf("x", "y", "approved")];
    expect(ids(insertOnEdge(edges, "a->b", "n", [null]))).toEqual(["a-->n", "n-->b", "x-approved->y"]);
    expect(ids(insertOnEdge(edges, "x->y:approved", "n", ["true", "false"]))).toEqual(["a-->b", "n-true->y", "x-approved->n"]);
    expect(ids(insertOnEdge(edges, "a->b", "n", []))).toEqual(["a-->n", "x-approved->y"]);
  });

  it("joins the neighbours of a deleted step with one way in and one way out, and no others", () => {
    const edges = [edgeOf("a", "b", "approved"), edgeOf("b", "c", null), edgeOf("c", "d", "true"), edgeOf("c", "e", "false")];
    expect(ids(bridgesOver(edges, new Set(["b"])))).toEqual(["a-approved->c"]);
    expect(bridgesOver(edges, new Set(["c"]))).toEqual([]);
  });

  it("adds after a step on the chosen output: connected when free, in between when taken", () => {
    const edges = [edgeOf("ok", "send", "approved")];
    expect(ids(connectAfter(edges, "ok", "rejected", "n", [null]))).toEqual(["ok-approved->send", "ok-rejected->n"]);
    expect(ids(connectAfter(edges, "ok", "approved", "n", [null]))).toEqual(["n-->send", "ok-approved->n"]);
  });

  it("walks the journey with the arrow keys", () => {
    const nodes = [step("t", "trigger", {}, 0, 0), step("a", "approval", {}, 0, 120), step("l", "end", {}, -200, 240), step("r", "end", {}, 200, 240)];
    const edges = [edgeOf("t", "a", null), edgeOf("a", "r", "rejected"), edgeOf("a", "l", "approved")];
    expect(neighbour(nodes, edges, "t", "ArrowDown")).toBe("a");
    expect(neighbour(nodes, edges, "a", "ArrowDown")).toBe("l");
    expect(neighbour(nodes, edges, "l", "ArrowRight")).toBe("r");
    expect(neighbour(nodes, edges, "r", "ArrowUp")).toBe("a");
    expect(neighbour(nodes, edges, "t", "ArrowUp")).toBe(null);
  });
});

describe("copy and paste", () => {
  it("gives new ids, keeps the edges among the copied steps and rewrites their references to each other", () => {
    const nodes = [
      step("trigger", "trigger"),
      step("draft", "model_draft", { prompt: "Hi {{input.name}}" }, 0, 100),
      step("send", "send_email", { text: "{{steps.draft.output.text}}", subject: "{{steps.other.output.x}}" }, 0, 200),
      step("reply", "wait_for_reply", { replyTo: "send" }, 0, 300),
    ];
    const edges = [edgeOf("trigger", "draft", null), edgeOf("draft", "send", null), edgeOf("send", "reply", null)];
    const snippet = copySteps(nodes, edges, new Set(["trigger", "draft", "send", "reply"]));
    expect(snippet?.nodes.map((n) => n.id)).toEqual(["draft", "send", "reply"]);
    const out = pasteSteps(snippet as never, new Set(nodes.map((n) => n.id)), new Set(["send_2"]), { x: 260, y: 24 });
    expect([...out.ids]).toEqual([
      ["draft", "model_draft"],
      ["send", "send_email"],
      ["reply", "wait_for_reply"],
    ]);
    expect(ids(out.edges)).toEqual(["model_draft-->send_email", "send_email-->wait_for_reply"]);
    const byId = Object.fromEntries(out.nodes.map((n) => [n.id, n]));
    expect(byId.send_email?.data.config).toEqual({ text: "{{steps.model_draft.output.text}}", subject: "{{steps.other.output.x}}" });
    expect(byId.wait_for_reply?.data.config).toEqual({ replyTo: "send_email" });
    expect(byId.send_email?.position).toEqual({ x: 260, y: 224 });
    // The original is untouched.
    expect(nodes[2]?.data.config).toEqual({ text: "{{steps.draft.output.text}}", subject: "{{steps.other.output.x}}" });
  });

  it("pasting a copy of a step next to its original numbers it (draft -> draft_2) and rewrites only the copy", () => {
    const nodes = [step("draft", "model_draft"), step("send", "send_email", { text: "{{steps.draft.output.text}}" })];
    const snippet = copySteps(nodes, [edgeOf("draft", "send", null)], new Set(["draft", "send"]));
    const out = pasteSteps(snippet as never, new Set(["draft", "send", "model_draft", "send_email"]), new Set(), { x: 0, y: 0 });
    expect(out.nodes.map((n) => n.id)).toEqual(["model_draft_2", "send_email_2"]);
    expect(out.nodes[1]?.data.config).toEqual({ text: "{{steps.model_draft_2.output.text}}" });
  });
});

describe("the layout", () => {
  it("flows top to bottom and never fits below the readable zoom", () => {
    const nodes = Array.from({ length: 30 }, (_, i) => ({ id: `s${i}` }));
    const edges = nodes.slice(1).map((n, i) => ({ source: `s${i}`, target: n.id }));
    const at = tidyLayout(nodes, edges);
    expect((at.get("s0")?.y ?? 0) < (at.get("s1")?.y ?? 0)).toBe(true);
    const placed = nodes.map((n) => ({ id: n.id, position: at.get(n.id) as { x: number; y: number } }));
    const view = fitReadable(boundsOf(placed), { width: 700, height: 600 });
    expect(view.zoom).toBe(readableMinZoom);
    // From the top: the trigger is on screen.
    expect(view.y + (at.get("s0")?.y ?? 0) * view.zoom).toBeGreaterThanOrEqual(0);
    expect(fitReadable(boundsOf(placed.slice(0, 2)), { width: 700, height: 600 }).zoom).toBe(1);
  });
});

describe("the first output's branch on the left", () => {
  it("approved left of rejected, true left of false", () => {
    const outputs: Record<string, (string | null)[]> = { approval: ["approved", "rejected"], reply: ["reply", "timeout"], check: ["true", "false"] };
    const e = (source: string, target: string, sourceHandle: string | null = null) => ({ source, target, sourceHandle });
    const story = [
      e("trigger", "wait"),
      e("wait", "draft"),
      e("draft", "approval"),
      e("approval", "send", "approved"),
      e("approval", "dropped", "rejected"),
      e("send", "reply"),
      e("reply", "crm", "reply"),
      e("reply", "crm", "timeout"),
      e("crm", "done"),
      e("dropped", "check"),
      e("check", "yes", "true"),
      e("check", "no", "false"),
    ];
    const ids = [...new Set(story.flatMap((x) => [x.source, x.target]))].map((id) => ({ id }));
    const at = tidyLayout(ids, story, (id) => outputs[id] ?? [null]);
    expect((at.get("send")?.x ?? 0) < (at.get("dropped")?.x ?? 0)).toBe(true);
    expect((at.get("yes")?.x ?? 0) < (at.get("no")?.x ?? 0)).toBe(true);
  });
});

describe("a refused save", () => {
  it("is a conflict only when the server says the revision moved; busy or unreachable is retried; a refusal in words is shown", () => {
    expect(saveOutcome({ data: { code: "CONFLICT", holdfast: { code: "draft_conflict" } }, message: "x" })).toEqual({ kind: "conflict" });
    // Another CONFLICT (a unique violation put in words) is not an edit conflict: the sentence is shown.
    expect(saveOutcome({ data: { code: "CONFLICT" }, message: "That was already saved." })).toEqual({ kind: "refused", text: "That was already saved." });
    expect(saveOutcome({ data: { code: "INTERNAL_SERVER_ERROR" }, message: "Prisma 53300 too many connections" })).toEqual({ kind: "busy" });
    expect(saveOutcome({ data: { code: "SERVICE_UNAVAILABLE" } })).toEqual({ kind: "busy" });
    expect(saveOutcome(new TypeError("Failed to fetch"))).toEqual({ kind: "busy" });
    expect(saveOutcome(Object.assign(new Error("a graph has one trigger"), { data: { code: "BAD_REQUEST" } }))).toEqual({ kind: "refused", text: "a graph has one trigger" });
    expect([1, 2, 3, 4, 5, 6].map(retryDelayMs)).toEqual([2000, 4000, 8000, 16000, 30000, 30000]);
  });
});
