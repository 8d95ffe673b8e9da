import { describe, expect, it } from "vitest";
import { wilson } from "../src/decide/stats/wilson";

describe("wilson", () => {
  it("matches the textbook 95% intervals", () => {
    // 8 of 10: [0.4902, 0.9433]; 50 of 100: [0.4038, 0.5962]; 1 of 1000: [0.00018, 0.00564].
    const a = wilson(8, 10);
    expect(a.rate).toBe(0.8);
    expect(a.low).toBeCloseTo(0.4902, 4);
    expect(a.high).toBeCloseTo(0.9433, 4);
    const b = wilson(50, 100);
    expect(b.low).toBeCloseTo(0.4038, 4);
    expect(b.high).toBeCloseTo(0.5962, 4);
    const c = wilson(1, 1000);
    expect(c.low).toBeCloseTo(0.000177, 5);
    expect(c.high).toBeCloseTo(0.005643, 5);
  });

  it("stays inside [0, 1] at the edges and is wide when little is known", () => {
    expect(wilson(0, 3)).toMatchObject({ rate: 0, low: 0 });
    expect(wilson(0, 3).high).toBeCloseTo(0.5615, 4);
    expect(wilson(3, 3).high).toBe(1);
    expect(wilson(3, 3).low).toBeCloseTo(0.4385, 4);
    expect(wilson(0, 0)).toEqual({ rate: 0, low: 0, high: 1 });
  });

  it("narrows as the count grows, and refuses what is no count", () => {
    const width = (n: number) => wilson(n / 2, n).high - wilson(n / 2, n).low;
    expect(width(1000)).toBeLessThan(width(100));
    expect(width(100)).toBeLessThan(width(10));
    expect(() => wilson(5, 3)).toThrow(RangeError);
    expect(() => wilson(-1, 3)).toThrow(RangeError);
    expect(() => wilson(1.5, 3)).toThrow(RangeError);
  });
});
