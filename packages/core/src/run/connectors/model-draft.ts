import { type ModelConnectionConfig, modelConnectionConfig } from "../../versions/connection-kinds/model";
import { performHttpRequest } from "../../providers/effects/http-request";
import { cannedDraft } from "../test-runs/script";
import { budgetsReserve, budgetsSettle } from "../../store/sql/budgets";
import type { StepOutcome } from "../../base/outcome/outcome";
import { TemplateError } from "../../base/templates/render";
import { chatCompletionsCall, renderDraftPrompt } from "./calls";
import { type Connector, effectOwner, takenOver } from "./connector";

/** A conservative token estimate for text we have not sent yet (about 4 characters per token, rounded up). */
export const estimateTokens = (text: string) => Math.ceil(text.length / 3);

export function costMicros(config: ModelConnectionConfig, inputTokens: number, outputTokens: number): number {
  return (inputTokens * config.inputMicrosPerMTok + outputTokens * config.outputMicrosPerMTok) / 1_000_000;
}

/**
 * model_draft: drafts text from a prompt template over the run's data. Before the call it reserves the worst case
 * (the prompt's estimated tokens plus maxTokens of output) against the organisation's budget; a reservation the
 * budget cannot cover parks the step with the reason (raising the budget resumes it). After the call the real cost
 * (the provider's usage) is settled. A repeated draft has no outside effect, only a cost, so an uncertain attempt
 * is simply made again; the slow lane allows at most 2 attempts.
 */
export const modelDraftConnector: Connector<"model_draft"> = {
  kind: "model_draft",
  connection: { kind: "model", name: (node) => node.config.connection },
  providerIdempotent: () => true,
  async perform(ctx, key, begin): Promise<StepOutcome> {
    const { node, step, db } = ctx;
    const parsed = modelConnectionConfig.safeParse(ctx.connection?.config);
    if (!parsed.success) return { kind: "fail", error: { code: "bad_connection", message: `connection "${node.config.connection}" is not a model endpoint`, permanent: true, notPerformed: true } };
    const config = parsed.data;
    let rendered: { prompt: string; system: string | undefined };
    try {
      rendered = renderDraftPrompt(node.config, await ctx.templates());
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { kind: "fail", error: { code: "template_error", message: error.message, permanent: true, notPerformed: true } };
    }
    // A test run set not to call the model: a canned draft, said to be one; nothing counted against the budget.
    if (ctx.simulation && !ctx.simulation.script.modelCalls) {
      if (!(await begin())) return takenOver(key);
      return { kind: "done", output: { text: cannedDraft.text, model: "none (test run: no model call)", usage: { input: 0, output: 0 }, costMicros: 0, canned: true } };
    }
    const owner = effectOwner(step);
    const { prompt, system } = rendered;
    const estimate = costMicros(config, estimateTokens(`${system ?? ""}${prompt}`) + 16, node.config.maxTokens);
    const left = await budgetsReserve(db, step.orgId, key, owner, estimate);
    if (left === null) {
      const reason = `the organisation's model budget cannot cover this draft (up to ${(estimate / 1e6).toFixed(4)} USD): raise the budget`;
      return { kind: "park", error: { code: "budget_exhausted", message: reason, reason, estimateMicros: Math.ceil(estimate) } };
    }
    if (!(await begin())) {
      await budgetsSettle(db, step.orgId, key, owner, 0);
      return takenOver(key);
    }
    const call = chatCompletionsCall(config, node.config, rendered);
    const outcome = await performHttpRequest({
      provider: "model",
      config: {
        ...call,
        headers: ctx.connection?.password ? { Authorization: `Bearer ${ctx.connection.password}` } : {},
        sendInput: false,
        timeoutMs: config.timeoutMs,
        idempotent: true,
      },
      idempotencyKey: key,
      runId: step.runId,
      input: null,
      signal: ctx.signal,
    });
    if (outcome.kind !== "done") {
      // Refused before any work (429/503/401...): nothing was charged. Otherwise the reservation counts as spent.
      await budgetsSettle(db, step.orgId, key, owner, (outcome.kind === "retry" || outcome.kind === "fail") && outcome.error.notPerformed ? 0 : null);
      return outcome;
    }
    const body = (outcome.output as { body: unknown }).body as {
      choices?: { message?: { content?: string } }[];
      usage?: { prompt_tokens?: number; completion_tokens?: number };
    };
    const text = body.choices?.[0]?.message?.content;
    const usage = { input: body.usage?.prompt_tokens ?? null, output: body.usage?.completion_tokens ?? null };
    const actual = usage.input !== null && usage.output !== null ? costMicros(config, usage.input, usage.output) : null;
    await budgetsSettle(db, step.orgId, key, owner, actual);
    if (typeof text !== "string") {
      return { kind: "fail", error: { code: "model_bad_answer", message: "the model's answer has no choices[0].message.content", permanent: true } };
    }
    return { kind: "done", output: { text, model: config.model, usage, costMicros: actual === null ? Math.ceil(estimate) : Math.ceil(actual) } };
  },
};
