"use client";

import { Handle, type Node, type NodeProps, Position } from "@xyflow/react";
import Link from "next/link";
import { createContext, useContext } from "react";
import { kindInfo } from "../../kinds";
import { bucketWords, type CountWindow, count, emailFigures, type StepBucket, type StepCounts, runsAtHeading, runsAtHref, stepBuckets } from "./counts-model";

/** Where a count's runs are listed: the automation, the shown version (null: all) and the window. */
export interface CountsPlace {
  orgSlug: string;
  automationSlug: string;
  version: number | null;
  window: CountWindow;
}
export const CountsPlaceContext = createContext<CountsPlace>({ orgSlug: "", automationSlug: "", version: null, window: "7d" });

export type CountNodeData = {
  kind: string;
  name?: string;
  outputs: (string | null)[];
  /** A step's counts; null for a node that keeps no step (trigger, split, branch, end): it shows `arrived`. */
  counts: StepCounts | null;
  arrived: number;
  started: number;
};
export type CountFlowNode = Node<CountNodeData>;

/**
 * A step in the counts view: its kind and title, then how many runs are there now, passed through, converted there,
 * failed, are held or were stopped (each a link to those runs), and a send step's email figures. A trigger shows the
 * runs started (no link: the runs list's own filters count test runs and every day); a node that keeps no step shows
 * how many runs came to it.
 */
export function CountNode({ id, data }: NodeProps<CountFlowNode>) {
  const info = kindInfo(data.kind);
  const title = data.name ?? id;
  const labelled = data.outputs.filter((o) => o !== null).length > 1;
  return (
    <div className={`step-node count-node${labelled ? " has-outputs" : ""}`} data-node={id} title={title}>
      {data.kind !== "trigger" && <Handle type="target" position={Position.Top} isConnectable={false} />}
      <div className="step-head">
        <span className="step-icon" aria-hidden>
          {info?.icon ?? "?"}
        </span>
        <span className="step-kind">{info?.label ?? data.kind}</span>
      </div>
      <div className="step-title">{title}</div>
      {data.kind === "trigger" ? (
        <div className="count-line">
          <span className="count" data-count="started">
            <b>{count(data.started)}</b> started
          </span>
        </div>
      ) : data.counts ? (
        <StepCountLine nodeId={id} title={title} counts={data.counts} />
      ) : (
        <div className="count-line">
          <span className="count" data-count="arrived">
            <b>{count(data.arrived)}</b> {data.kind === "end" ? "ended here" : "went through"}
          </span>
        </div>
      )}
      {data.counts?.email && data.counts.email.sent > 0 ? <EmailLine email={data.counts.email} /> : null}
      {data.outputs.map((o, i) =>
        o === null ? (
          <Handle key="next" type="source" position={Position.Bottom} isConnectable={false} />
        ) : (
          <Handle key={o} id={o} type="source" position={Position.Bottom} isConnectable={false} style={{ left: `${((i + 1) * 100) / (data.outputs.length + 1)}%` }} />
        ),
      )}
    </div>
  );
}

/** now and passed through, then converted, failed, held and stopped when any: each a link to the runs behind it. */
function StepCountLine({ nodeId, title, counts }: { nodeId: string; title: string; counts: StepCounts }) {
  const place = useContext(CountsPlaceContext);
  const shown = stepBuckets.filter((b) => b === "now" || b === "passed" || counts[b] > 0);
  return (
    <div className="count-line">
      {shown.map((b: StepBucket) =>
        counts[b] > 0 ? (
          <Link key={b} className={`count count-${b}`} data-count={b} href={runsAtHref({ ...place, nodeId, bucket: b })} title={runsAtHeading(b, title, counts[b])}>
            <b>{count(counts[b])}</b> {bucketWords[b]}
          </Link>
        ) : (
          <span key={b} className="count count-zero" data-count={b}>
            <b>0</b> {bucketWords[b]}
          </span>
        ),
      )}
    </div>
  );
}

function EmailLine({ email }: { email: NonNullable<StepCounts["email"]> }) {
  const [sent, delivered, , opened, clicked] = emailFigures(email);
  return (
    <div className="count-line email-line" data-email>
      {count(sent?.n ?? 0)} sent · {delivered?.rate} delivered · {opened?.rate} opened · {clicked?.rate} clicked
    </div>
  );
}
