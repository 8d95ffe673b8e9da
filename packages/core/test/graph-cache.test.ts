import type { Tx } from "@holdfast/db";
import { describe, expect, it } from "vitest";
import { GraphCache } from "../src/versions/graph-cache";

const graph = {
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    { id: "e", kind: "end" },
  ],
  edges: [{ from: "t", to: "e" }],
};

/** A transaction that answers versionsGraph's read after a tick, counting the reads. */
function fakeTx(answer: () => unknown) {
  const tx = { reads: 0, $queryRaw: async () => (tx.reads++, await new Promise((r) => setTimeout(r, 5)), answer()) };
  return tx;
}

describe("the parsed-graph cache", () => {
  it("reads a version once for a burst of starts that all miss it at once", async () => {
    const tx = fakeTx(() => [{ graph }]);
    const cache = new GraphCache();
    const got = await Promise.all(Array.from({ length: 32 }, () => cache.get(tx as unknown as Tx, "org_1", "ver_1")));
    expect(tx.reads).toBe(1);
    expect(new Set(got).size).toBe(1);
    await cache.get(tx as unknown as Tx, "org_1", "ver_1");
    expect(tx.reads).toBe(1);
  });

  it("lets a caller whose shared read failed read again in its own transaction", async () => {
    const failing = fakeTx(() => {
      throw new Error("current transaction is aborted");
    });
    const fine = fakeTx(() => [{ graph }]);
    const cache = new GraphCache();
    const [first, second] = await Promise.allSettled([cache.get(failing as unknown as Tx, "org_1", "ver_2"), cache.get(fine as unknown as Tx, "org_1", "ver_2")]);
    expect(first.status).toBe("rejected");
    expect(second.status).toBe("fulfilled");
    expect(fine.reads).toBe(1);
  });
});
