import { graphSchema, parseGraph } from "@holdfast/core/versions";
import { defineStepKind, kindOf, laneKinds, registerKind } from "@holdfast/core/kinds";
import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Palette } from "../src/app/automations/palette";
import { StepForm } from "../src/app/forms/step-form";
import type { FormContext } from "../src/app/forms/widgets";

/**
 * A kind is one module: registered here (as an extension would be), it is in the graph schema, its lane's kinds, the
 * palette and has a form, with no change to the editor.
 */
const smsConfig = z
  .object({
    connection: z.string().min(1),
    to: z.string().min(1).default("{{input.phone}}"),
    message: z.string().min(1).max(480),
    retries: z.number().int().min(1).max(5).optional(),
  })
  .strict();

const sendSms = defineStepKind({
  kind: "send_sms",
  label: "Send SMS",
  icon: "✆",
  description: "Sends a text message to the contact's phone.",
  group: "Actions",
  inline: false,
  lane: "io",
  effect: true,
  waits: false,
  config: smsConfig,
  defaults: { connection: "", message: "" },
  fields: [
    { name: "connection", label: "Send through", required: true, widget: { type: "connection", kind: "http" } },
    { name: "to", label: "Phone number", required: true, widget: { type: "template" } },
    { name: "message", label: "Text message", help: "At most 480 characters.", required: true, widget: { type: "template", multiline: true } },
    { name: "retries", label: "Attempts", advanced: true, widget: { type: "number", min: 1, max: 5 } },
  ],
  outputs: null,
  output: [{ path: "sid", label: "Message id" }],
  summary: (c) => `Text ${c.to}: "${c.message}"`,
});

registerKind(sendSms);

const ctx: FormContext = {
  orgSlug: "acme",
  nodeId: "sms",
  graph: { nodes: [{ id: "trigger", kind: "trigger" }, { id: "sms", kind: "send_sms" }] },
  variables: [{ path: "input.phone", label: "phone", group: "Payload", example: "+49 170 000" }],
  sample: { phone: "+49 170 000" },
  connections: [{ name: "twilio", kind: "http" }, { name: "mail", kind: "smtp" }],
  members: [],
  canEdit: true,
};

describe("a kind registered as one module", () => {
  it("appears in the palette, with its icon, in its group", () => {
    const html = renderToStaticMarkup(createElement(Palette, { canEdit: true, onAdd: () => {} }));
    expect(html).toContain('data-kind="send_sms"');
    expect(html).toContain("Send SMS");
    expect(html).toContain("✆");
    // Listed under Actions, after the built-in actions.
    expect(html.indexOf("send_sms")).toBeGreaterThan(html.indexOf(">Actions<"));
    expect(html.indexOf("send_sms")).toBeLessThan(html.indexOf(">Logic<"));
  });

  it("has a form generated from its fields: labels, required marks, help, pickers filtered by kind, More settings", () => {
    const html = renderToStaticMarkup(
      createElement(StepForm, { module: sendSms, config: { connection: "twilio", to: "{{input.phone}}", message: "Hi" }, onChange: () => {}, ctx, problems: [["message", "too short for a test"]] }),
    );
    for (const text of ["Send through", "Phone number", "Text message", "At most 480 characters.", "More settings", "Attempts", "Insert variable", "too short for a test"]) {
      expect(html).toContain(text);
    }
    // The connection picker offers HTTP API connections only.
    expect(html).toContain('<option value="twilio" selected="">twilio</option>');
    expect(html).not.toContain('value="mail"');
    expect(html).toContain('name="message"');
  });

  it("is part of the graph schema, its lane's kinds and the walk's checks", () => {
    expect(kindOf("send_sms")?.label).toBe("Send SMS");
    expect(laneKinds("io")).toContain("send_sms");
    const graph = {
      nodes: [
        { id: "trigger", kind: "trigger", config: { eventIdField: "id" } },
        { id: "sms", kind: "send_sms", config: { connection: "twilio", message: "Hi {{input.name}}" } },
        { id: "end", kind: "end" },
      ],
      edges: [
        { from: "trigger", to: "sms" },
        { from: "sms", to: "end" },
      ],
    };
    const parsed = parseGraph(graph);
    expect(parsed.nodes[1]?.config).toEqual({ connection: "twilio", to: "{{input.phone}}", message: "Hi {{input.name}}" });
    const bad = graphSchema.safeParse({ ...graph, nodes: [graph.nodes[0], { id: "sms", kind: "send_sms", config: { connection: "twilio" } }, graph.nodes[2]] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toContain("nodes.1.config.message: Required");
    const unknown = graphSchema.safeParse({ ...graph, nodes: [graph.nodes[0], { id: "sms", kind: "send_fax", config: {} }, graph.nodes[2]] });
    expect(unknown.error?.issues[0]?.message).toMatch(/^there is no step kind "send_fax"; the kinds are trigger, wait, .*send_sms/);
  });
});
