import type { RunDetail } from "../../../../server/runs";
import { Json } from "../../../ui";
import { ApprovalsTable } from "./details-approvals";
import { EffectsTable } from "./details-effects";
import { SignalsTable } from "./details-signals";
import { StepsTable } from "./details-steps";
import { TimelineTable } from "./details-timeline";
import { TimersTable } from "./details-timers";
import type { When } from "./time";

/** Everything operators had, under a closed Details: start key, budgets, input, the recorded error and the tables. */
export function RunDetails({ detail, viewer, when }: { detail: RunDetail; viewer: string; when: When }) {
  const { run, steps, timeline, effects, timers, signals, approvals } = detail;
  return (
    <details className="run-details">
      <summary>Details: timeline, steps and attempts, effects, timers, signals, approvals, input</summary>
      <dl className="facts">
        <dt>Start key</dt>
        <dd className="mono small wrap">{run.startKey}</dd>
        <dt>Started</dt>
        <dd>
          {when(run.createdAt)}
        </dd>
        <dt>Finished</dt>
        <dd>
          {when(run.finishedAt)}
        </dd>
        <dt>Budgets</dt>
        <dd>
          {steps.length} of {run.maxSteps ?? "∞"} steps · expires {when(run.expiresAt)}
        </dd>
        {run.cancelRequestedAt && (
          <>
            <dt>Cancel requested</dt>
            <dd>
              {when(run.cancelRequestedAt)} {run.cancelReason}
            </dd>
          </>
        )}
      </dl>

      <h2>Input</h2>
      <Json value={run.input} />
      {run.error !== null && (
        <>
          <h2>Why it stopped (as recorded)</h2>
          <div className="error">
            <Json value={run.error} />
          </div>
        </>
      )}

      <StepsTable steps={steps} timeline={timeline} when={when} />
      <EffectsTable effects={effects} />
      <TimersTable timers={timers} when={when} />
      <SignalsTable signals={signals} when={when} />
      <ApprovalsTable approvals={approvals} edits={detail.approvalEdits} when={when} />
      <TimelineTable timeline={timeline} viewer={viewer} when={when} />
    </details>
  );
}
