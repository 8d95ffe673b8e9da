import { describe, expect, it } from "vitest";
import { hasUnstorableText, storable } from "../src/base/json";
import { jsonShapeProblem, parseFormBounded, payloadLimits } from "../src/base/bodies";
import { triggerPayload } from "../src/run/start/payload";

/** Bodies from outside: linear to parse whatever their shape, bounded in depth and fields, refused in words (issue 39). */
describe("trigger payloads", () => {
  const time = (fn: () => unknown) => {
    const started = performance.now();
    try {
      fn();
    } catch {
      // refusals are timed too
    }
    return performance.now() - started;
  };

  it("a form's repeated key costs what a plain form of the same size costs (it was quadratic: 15,000 took seconds)", () => {
    const repeated = "a=1&".repeat(900);
    const plain = `a=${"x".repeat(repeated.length - 2)}`;
    expect(parseFormBounded(repeated).a).toHaveLength(900);
    // 200 KB of a& is refused for its field count after one pass, not built up.
    const h1 = "a&".repeat(100_000);
    expect(() => triggerPayload("application/x-www-form-urlencoded", h1)).toThrow("the form has more than 1,000 fields: send fewer");
    const plainBig = `a=${"x".repeat(h1.length - 2)}`;
    const medians = (fn: () => unknown) => [0, 1, 2, 3, 4].map(() => time(fn)).sort((x, y) => x - y)[2] as number;
    expect(medians(() => triggerPayload("application/x-www-form-urlencoded", h1))).toBeLessThan(10 * medians(() => triggerPayload("application/x-www-form-urlencoded", plainBig)) + 5);
    expect(parseFormBounded(plain).a).toHaveLength(repeated.length - 2);
  });

  it("keeps a form's values, repeated fields as arrays, and no prototype keys", () => {
    expect(triggerPayload("application/x-www-form-urlencoded; charset=utf-8", "name=Maya&tag=a&tag=b&tag=c&__proto__=x&constructor=y")).toEqual({ name: "Maya", tag: ["a", "b", "c"] });
    expect(Object.keys(parseFormBounded(Array.from({ length: 1_000 }, (_, i) => `f${i}=`).join("&")))).toHaveLength(1_000);
  });

  it("JSON deeper than 64 levels or with more than 20,000 values is refused in words before it is parsed", () => {
    const deep = (n: number) => `{"a":${"[".repeat(n)}${"]".repeat(n)}}`;
    expect(triggerPayload("application/json", deep(63))).toBeTruthy();
    expect(() => triggerPayload("application/json", deep(64))).toThrow("the body is nested more than 64 levels deep: send at most 64 levels of objects and arrays");
    expect(() => triggerPayload("application/json", deep(40_000))).toThrow(/nested more than 64 levels/);
    expect(() => triggerPayload("application/json", `{"a":[${"0,".repeat(payloadLimits.maxJsonValues)}0]}`)).toThrow("the body has more than 20,000 fields and array elements: send fewer");
    // Brackets and commas inside strings (escaped quotes included) are text, not structure.
    expect(jsonShapeProblem(JSON.stringify({ a: `${"[".repeat(500)}\\"${",".repeat(30_000)}` }))).toBeNull();
    expect(() => triggerPayload("application/json", "{not json")).toThrow("the body is not valid JSON");
    expect(() => triggerPayload("application/json", "[1]")).toThrow("the body must be a JSON object");
  });

  it("finds unstorable text however deep the value (no recursion to overflow)", () => {
    let v: unknown = "ok";
    for (let i = 0; i < 100_000; i++) v = [v];
    expect(hasUnstorableText(v)).toBe(false);
    expect(hasUnstorableText({ a: [{ b: "x\u0000" }] })).toBe(true);
    expect(hasUnstorableText({ ["\uD800"]: 1 })).toBe(true);
  });

  it("cleans a provider's answer for jsonb only where it must, and gives a clean one back as it is", () => {
    const clean = { status: 200, body: { ok: true, items: ["a", 1, null] } };
    expect(storable(clean)).toBe(clean);
    const dirty = { status: 200, body: { text: "a\u0000b", ["k\uD800"]: ["\uDC00x"] } };
    expect(storable(dirty)).toEqual({ status: 200, body: { text: "a\uFFFDb", ["k\uFFFD"]: ["\uFFFDx"] } });
    expect(dirty.body.text).toBe("a\u0000b");
    expect(storable("x\u0000")).toBe("x\uFFFD");
  });
});
