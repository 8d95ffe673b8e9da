import { createTestDatabase, httpChainGraph, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDraft, InvalidDraftError, publishDraft, saveDraft } from "../src/run/automations/drafts";

/**
 * A published step id names one step for the automation's life: its history and its effect keys (run/node/iteration,
 * which a run migrated to a newer version keeps) must never be taken over by a different step. A draft that brings a
 * removed id back, or gives a published id to a different kind of step, is refused at save (a problem) and publish.
 */
let t: TestDatabase;
let orgId = "";
let automationId = "";

type Node = { id: string; kind: string; config?: Record<string, unknown> };
const trigger: Node = { id: "start", kind: "trigger", config: { eventIdField: "id" } };
const end: Node = { id: "finish", kind: "end" };
const call = (id: string, url = "https://crm.example.com/a"): Node => ({ id, kind: "http_request", config: { url } });
const chain = (...nodes: Node[]) => ({
  nodes: [trigger, ...nodes, end],
  edges: [trigger, ...nodes].map((n, i) => ({ from: n.id, to: (nodes[i] ?? end).id })),
});

async function save(graph: unknown) {
  const { revision } = await getDraft(t.db, orgId, automationId);
  return saveDraft(t.db, orgId, automationId, graph, revision, "test");
}
async function publishRefusal(): Promise<{ path: string; message: string }[]> {
  const error = await publishDraft(t.db, orgId, automationId, "test", "owner").then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InvalidDraftError);
  return (error as InvalidDraftError).problems;
}

beforeAll(async () => {
  t = await createTestDatabase();
  // Version 1: start -> call_1 -> call_2 -> finish.
  const v1 = await publish(t.db, httpChainGraph("https://crm.example.com/a", 2), { automation: "reserved" });
  orgId = v1.orgId;
  automationId = v1.automationId;
  // Version 2 drops call_2.
  await save(chain(call("call_1")));
  await expect(publishDraft(t.db, orgId, automationId, "test", "owner")).resolves.toMatchObject({ version: 2 });
});
afterAll(async () => t?.drop());

describe("published step ids stay reserved", () => {
  it("a new step under an id a published version used is refused at save and at publish, naming the id and the version", async () => {
    const draft = await save(chain(call("call_1"), call("call_2", "https://crm.example.com/other")));
    const expected = {
      path: "node:call_2.id",
      message:
        'the step id "call_2" was used by version 1 for its "HTTP request" step and is reserved for the automation\'s life (its runs\' history and effect keys name it): give this step a new id',
    };
    expect(draft.problems).toContainEqual(expected);
    expect(await publishRefusal()).toContainEqual(expected);
  });

  it("a published id given to a different kind of step is refused", async () => {
    const draft = await save(chain({ id: "call_1", kind: "wait", config: { rule: { kind: "duration", seconds: 60 } } }));
    const expected = {
      path: "node:call_1.id",
      message:
        'the step id "call_1" is the "HTTP request" step of version 2 and is reserved for the automation\'s life (its runs\' history and effect keys name it): give this "Wait" step a new id',
    };
    expect(draft.problems).toContainEqual(expected);
    expect(await publishRefusal()).toContainEqual(expected);
  });

  it("kept ids and new ids publish; the draft lists every published id so the editor never generates one", async () => {
    const draft = await save(chain(call("call_1"), call("call_3")));
    expect(draft.problems).toEqual([]);
    expect(draft.publishedIds).toEqual(["call_1", "call_2", "finish", "start"]);
    await expect(publishDraft(t.db, orgId, automationId, "test", "owner")).resolves.toMatchObject({ version: 3 });
  });
});
