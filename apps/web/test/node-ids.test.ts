import { describe, expect, it } from "vitest";
import { newNodeId } from "../src/app/automations/kinds";

describe("the editor's new step ids", () => {
  it("avoid the ids on the canvas and every id a published version used (reserved for the automation's life)", () => {
    const onCanvas = new Set(["trigger", "end"]);
    // "http_request" was published and then deleted from the draft: a new HTTP step must not take its id.
    expect(newNodeId("http_request", onCanvas, new Set(["trigger", "end", "http_request"]))).toBe("http_request_2");
    expect(newNodeId("http_request", new Set([...onCanvas, "http_request_2"]), new Set(["http_request", "http_request_3"]))).toBe("http_request_4");
    expect(newNodeId("wait", onCanvas, new Set(["http_request"]))).toBe("wait");
  });
});
