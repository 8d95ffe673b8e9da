import type { Db } from "@holdfast/db";
import type { RecordedRequest, SimulatedCall } from "../../providers/effects/http-request";
import { type EmailMessage, performSendEmail, renderEmailMessage, type SmtpConnectionConfig } from "../../providers/effects/send-email";
import type { StepOutcome } from "../../base/outcome/outcome";
import type { ClaimedStep } from "../../store/sql/steps";
import { testRunsGet } from "../../store/sql/test-runs";
import { answerFor, type TestScript, testScript } from "../test-runs/script";

/**
 * A test run's outside world (issue 40). Every effect kind's connector runs as for a real run (the same templates,
 * checks and answer classification) with this in its context, and hands the provider's part to it instead:
 * - a call (`http_request`, `crm_upsert`): recorded as it would be sent, secrets hidden, and answered with the
 *   tester's choice (run/connectors/http-request.ts, crm-upsert.ts pass `call()` to the HTTP effect: no connection);
 * - an email (`send_email`): built exactly as it would go out, into memory; "Send to me" sends that message, marked
 *   "[Test]", to the tester's own address only (`email()`);
 * - a model draft: called for real unless the script says not to (run/connectors/model-draft.ts).
 * The dispatcher (connector.ts `connectorHandler`) makes this for a claimed step of a test run and leaves out what
 * belongs to real traffic: connection caps, the circuit breaker.
 */
export interface Simulation {
  script: TestScript;
  /** "Send to me": the tester's own address, or null. */
  sendTo: string | null;
  /** A simulated call of `nodeId`, recording what it would send; `secrets`: values to hide in the record. */
  call(nodeId: string, secrets?: string[]): SimulatedCall;
  /** The email built, not sent (and sent to the tester when asked). */
  email(input: { config: SmtpConnectionConfig; password: string | null; message: EmailMessage; idempotencyKey: string; runId: string }): Promise<StepOutcome>;
  /** Marks what the step did as a test run's, for its output or its error (the run page says so). */
  mark(outcome: StepOutcome): StepOutcome;
}

/** The simulation for a claimed step of a test run; null for a real run. */
export async function simulationFor(db: Db, step: Pick<ClaimedStep, "orgId" | "runId" | "test">): Promise<Simulation | null> {
  if (!step.test) return null;
  const row = await testRunsGet(db, step.orgId, step.runId);
  // A test run started before test_runs existed has no script: the defaults (every call succeeds).
  const script = testScript.parse(row?.script ?? {});
  const recorded: RecordedRequest[] = [];
  return {
    script,
    sendTo: row?.sendTo ?? null,
    call: (nodeId, secrets = []) => ({ answer: answerFor(script, nodeId), secrets, record: (r) => recorded.push(r) }),
    async email(input) {
      const built = await renderEmailMessage({ from: input.config.from, message: input.message, idempotencyKey: input.idempotencyKey, runId: input.runId });
      const sendTo = row?.sendTo ?? null;
      if (sendTo === null) return { kind: "done", output: built };
      // "Send to me": the same message to the tester only, its subject marked; never the contact's address.
      const toTester = await performSendEmail({
        ...input,
        message: { ...input.message, to: sendTo, subject: `[Test] ${input.message.subject}` },
        idempotencyKey: `${input.idempotencyKey}:to-tester`,
      });
      if (toTester.kind !== "done") return { kind: "done", output: { ...built, sentToTester: { to: sendTo, error: toTester.kind === "defer" ? toTester.reason : toTester.error.message } } };
      return { kind: "done", output: { ...built, sentToTester: { to: sendTo, messageId: (toTester.output as { messageId: string }).messageId } } };
    },
    mark(outcome) {
      const request = recorded.length === 1 ? { request: recorded[0] } : recorded.length > 1 ? { requests: recorded } : {};
      switch (outcome.kind) {
        case "done":
          return { ...outcome, output: { ...(outcome.output as object), ...request, testRun: true } };
        case "retry":
        case "fail":
          return {
            ...outcome,
            error: { ...outcome.error, ...request, simulated: recorded.length > 0, message: recorded.length > 0 ? `Simulated answer (test run): ${outcome.error.message}` : outcome.error.message },
          };
        default:
          return outcome;
      }
    },
  };
}
