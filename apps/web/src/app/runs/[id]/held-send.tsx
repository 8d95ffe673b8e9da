"use client";

/**
 * A test run's send held by a sending rule (issue 44): "Held by quiet hours until Tue 8 Dec 08:00 Europe/Paris (07:00
 * UTC): quiet hours: …" and "Skip to then", which moves the run's clock to that instant and sends (simulated).
 */
export function HeldSend(p: {
  w: { stepId: string; nodeId: string; rule: "quiet_hours" | "frequency_cap"; until: Date | string; zone: string; words: string };
  when: (at: Date | string, zone: string) => string;
  disabled: boolean;
  skip: (stepId: string) => void;
}) {
  const by = p.w.rule === "quiet_hours" ? "quiet hours" : "the frequency cap";
  return (
    <>
      <span>
        “{p.w.nodeId}” is held by {by} until <strong data-held-until={new Date(p.w.until).toISOString()}>{p.when(p.w.until, p.w.zone)}</strong>
        <span className="small muted"> ({p.w.words})</span>.
      </span>{" "}
      <button type="button" name="skip-hold" disabled={p.disabled} onClick={() => p.skip(p.w.stepId)}>
        Skip to then
      </button>
    </>
  );
}
