import { z } from "zod";
import { nodeId } from "./ids";
import { defineStepKind } from "./kind";
import { durationWords } from "./words";

/**
 * Waits for a reply to the email sent by `replyTo` (a send_email node earlier in the graph), until `timeoutSeconds`
 * pass. Two outgoing edges: "reply" (a reply arrived first) and "timeout" (the deadline came first). Exactly one wins.
 */
export const waitForReplyConfig = z
  .object({
    replyTo: nodeId,
    timeoutSeconds: z.number().int().min(1).max(90 * 86_400),
  })
  .strict();

export const waitForReply = defineStepKind({
  kind: "wait_for_reply",
  label: "Wait for reply",
  icon: "↩",
  description: "Waits for the contact to answer an email this run sent, or gives up after a while.",
  group: "Waits",
  inline: false,
  lane: "human",
  effect: false,
  waits: true,
  config: waitForReplyConfig,
  defaults: { replyTo: "send_email", timeoutSeconds: 3 * 86_400 },
  fields: [
    { name: "replyTo", label: "Reply to the email sent by", required: true, widget: { type: "step", kinds: ["send_email"] } },
    { name: "timeoutSeconds", label: "Give up after", help: "Then the run takes the timeout edge.", required: true, widget: { type: "duration", min: 1, max: 90 * 86_400 } },
  ],
  outputs: ["reply", "timeout"],
  outputWords: { reply: "When they reply, go to", timeout: "When no reply comes in time, go to" },
  output: [
    { path: "outcome", label: "reply or timeout" },
    { path: "reply.text", label: "Reply text" },
    { path: "reply.subject", label: "Reply subject" },
    { path: "reply.from", label: "Reply sender" },
  ],
  edgeFor: (output) => ((output as { outcome?: string } | null)?.outcome === "reply" ? "reply" : "timeout"),
  summary: (c) => `Wait up to ${durationWords(c.timeoutSeconds)} for a reply to ${c.replyTo}`,
  checks: (node, graph) =>
    graph.nodes.find((n) => n.id === node.config.replyTo)?.kind === "send_email"
      ? []
      : [{ path: `node:${node.id}.config.replyTo`, message: `"${node.config.replyTo}" is not a Send email step of this automation` }],
});
