"use client";

import { kindInfo, palette } from "../../kinds";
import { type Choice, Chooser } from "./chooser";
import { FindDialog } from "./find-dialog";
import { type FlowNode, outputsOf, outputWords } from "./graph-model";
import type { Asking, StepEdits } from "./use-step-edits";

/** The question open over the canvas, if any: which kind of step, on which output, or which step to find. */
export function CanvasDialogs(props: {
  asking: Asking;
  setAsking: (asking: Asking) => void;
  nodes: FlowNode[];
  edits: Pick<StepEdits, "insertStep" | "addAfterSelected" | "addAfterOn">;
  goToStep: (id: string) => void;
}) {
  const { asking, setAsking, nodes } = props;
  const kindChoices: Choice[] = palette()
    .filter((k) => k.kind !== "trigger")
    .map((k) => ({ key: k.kind, label: k.label, icon: k.icon, hint: k.description }));
  const askingAfter = asking?.what === "output" ? nodes.find((n) => n.id === asking.after) : undefined;
  return (
    <>
      {asking?.what === "kind" && (
        <Chooser
          name="kind"
          title={asking.edgeId ? "Which step goes here?" : "Which step comes next?"}
          choices={kindChoices}
          onCancel={() => setAsking(null)}
          onPick={(kind) => {
            setAsking(null);
            if (asking.edgeId) props.edits.insertStep(kind, asking.edgeId);
            else props.edits.addAfterSelected(kind, asking.after);
          }}
        />
      )}
      {asking?.what === "output" && askingAfter && (
        <Chooser
          name="output"
          title={`Add "${kindInfo(asking.kind)?.label ?? asking.kind}" after "${askingAfter.data.name ?? askingAfter.id}": on which output?`}
          choices={outputsOf(askingAfter.data.kind, askingAfter.data.config).map((o) => ({
            key: o ?? "",
            label: outputWords(askingAfter.data.kind, o ?? "").replace(/(, go to|: go to)$/, ""),
          }))}
          onCancel={() => setAsking(null)}
          onPick={(output) => {
            setAsking(null);
            props.edits.addAfterOn(asking.kind, asking.after, output || null);
          }}
        />
      )}
      {asking?.what === "find" && (
        <FindDialog
          nodes={nodes}
          onClose={() => setAsking(null)}
          onPick={(id) => {
            setAsking(null);
            props.goToStep(id);
          }}
        />
      )}
    </>
  );
}
