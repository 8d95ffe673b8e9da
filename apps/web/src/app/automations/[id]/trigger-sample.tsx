"use client";

import { TestRunStarter } from "./test-run-starter";

/** The sample as readable lines (`lead.email: maya@example.com`), nested objects flattened with dots. */
export function sampleLines(value: unknown, prefix = ""): { key: string; value: string }[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const text = Array.isArray(value) ? value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ") : typeof value === "string" ? value : JSON.stringify(value);
    return [{ key: prefix || "(value)", value: text ?? "" }];
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return prefix ? [{ key: prefix, value: "(empty)" }] : [];
  return entries.flatMap(([k, v]) => sampleLines(v, prefix ? `${prefix}.${k}` : k));
}

/**
 * The sample payload the variable picker reads `input.*` from (its fields, folded away), and Test run with what a
 * test run does and does not do.
 */
export function SampleAndTestRun(props: {
  orgSlug: string;
  automationId: string;
  canEdit: boolean;
  steps: { id: string; kind: string }[];
  loading: boolean;
  sample: unknown;
  justChosen: boolean;
}) {
  const lines = props.sample ? sampleLines(props.sample) : [];
  return (
    <section className="stack trigger-settings" aria-label="sample and test run">
      <h3>Sample payload</h3>
      {props.loading ? (
        <p className="muted small">Loading the sample…</p>
      ) : lines.length === 0 ? (
        <p className="muted small" data-sample="none">
          No sample yet. The first accepted delivery becomes the sample; the step forms offer its fields as input.*.
        </p>
      ) : (
        <details className="sample" data-sample="set">
          <summary className="small">
            {lines.length} field{lines.length === 1 ? "" : "s"}
            {props.justChosen ? " (just chosen)" : ""}: {lines.slice(0, 3).map((l) => l.key).join(", ")}
            {lines.length > 3 ? ", …" : ""}
          </summary>
          <dl className="facts small">
            {lines.map((l) => (
              <div key={l.key} style={{ display: "contents" }}>
                <dt className="mono">{l.key}</dt>
                <dd className="wrap">{l.value}</dd>
              </div>
            ))}
          </dl>
        </details>
      )}
      <TestRunStarter orgSlug={props.orgSlug} automationId={props.automationId} canEdit={props.canEdit} steps={props.steps} />
      <p className="small muted">
        A test run plays the newest published version with the sample as its input. Nobody receives anything: emails are built, not sent; CRM
        updates and calls are recorded and answered as you choose here; contacts are not changed. The runs list marks it "Test".
      </p>
    </section>
  );
}
