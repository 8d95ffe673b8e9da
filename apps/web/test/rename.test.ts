import { describe, expect, it } from "vitest";
import { renameReferences } from "../src/app/automations/rename";

describe("renaming a step updates every reference to it", () => {
  it("templates, conditions and replyTo; not other steps whose id starts the same, nor plain text", () => {
    const config = {
      subject: "Re: {{steps.draft.output.subject}}",
      text: "{{steps.draft.output.text}} and {{steps.draft_2.output.text}} — a draft of steps.draftsman",
      condition: { all: [{ path: "steps.draft.output.ok", op: "eq", value: true }, { path: "input.steps.draft", op: "eq", value: 1 }] },
      replyTo: "draft",
      fields: { note: "{{#if steps.draft.output.ok}}yes{{/if}}" },
    };
    const { config: renamed, changed } = renameReferences(config, "draft", "ai_draft");
    expect(renamed).toEqual({
      subject: "Re: {{steps.ai_draft.output.subject}}",
      text: "{{steps.ai_draft.output.text}} and {{steps.draft_2.output.text}} — a draft of steps.draftsman",
      condition: { all: [{ path: "steps.ai_draft.output.ok", op: "eq", value: true }, { path: "input.steps.draft", op: "eq", value: 1 }] },
      replyTo: "ai_draft",
      fields: { note: "{{#if steps.ai_draft.output.ok}}yes{{/if}}" },
    });
    expect(changed).toBe(5);
  });

  it("changes nothing when nothing refers to the step", () => {
    expect(renameReferences({ url: "https://example.com/steps.draft" }, "send", "mail")).toEqual({
      config: { url: "https://example.com/steps.draft" },
      changed: 0,
    });
  });
});
