/** A template's journey in words: its steps top to bottom, as the editor will draw them. */
export function TemplateSteps({ steps }: { steps: string[] }) {
  return (
    <ol className="template-steps">
      {steps.map((s) => (
        <li key={s}>{s}</li>
      ))}
    </ol>
  );
}
