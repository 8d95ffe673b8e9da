import { describe, expect, it } from "vitest";
import { createLogger } from "../src/base/log";
import type { ClaimedStep } from "../src/store/sql/steps";
import { takeReadySteps } from "../src/run/steps/ready-listener";
import { Slots } from "../src/run/steps/slots";

/** A LISTEN connection that connects and listens, and never hears anything: the test wakes the worker by its bus. */
const quietListen = () => ({ connect: async () => {}, query: async () => {}, end: async () => {}, on: () => {} });
const step = (i: number) => ({ id: `stp_${i}` }) as unknown as ClaimedStep;
const tick = () => new Promise((r) => setTimeout(r, 20));

/** One wake-up to a worker of two slots whose take answers `answers` in turn; how many takes it made. */
async function takesAfterOneWake(answers: { taken: number; more: boolean }[]): Promise<number> {
  const limits: number[] = [];
  let wake = () => {};
  const worker = takeReadySteps({
    take: async (limit) => {
      limits.push(limit);
      const a = answers[limits.length - 1] ?? { taken: 0, more: false };
      return { taken: a.taken, more: a.more, claimed: Array.from({ length: a.taken }, (_, i) => step(i)) };
    },
    connect: quietListen,
    lane: "io",
    slots: new Slots(2),
    log: createLogger("test", "silent"),
    run: async () => {},
    bus: (onWake) => ((wake = onWake), { close: async () => {} }),
  });
  await tick(); // the LISTEN's first look
  const before = limits.length;
  wake();
  await tick();
  await worker.close();
  return limits.length - before;
}

describe("a lane worker's takes of ready steps", () => {
  it("takes again after filling its slots only when the take saw more due", async () => {
    expect(await takesAfterOneWake([{ taken: 0, more: false }, { taken: 2, more: true }, { taken: 1, more: false }])).toBe(2);
  });

  it("does not take again for nothing after a take that filled its slots and saw nothing more", async () => {
    expect(await takesAfterOneWake([{ taken: 0, more: false }, { taken: 2, more: false }])).toBe(1);
  });
});
