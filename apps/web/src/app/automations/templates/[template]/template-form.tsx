"use client";

import { buildFromTemplate, templateOf } from "@holdfast/core/kinds";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";
import { StepForm } from "../../../forms/step-form";
import type { FormContext } from "../../../forms/widgets";
import { SubmitButton } from "../../../submit-button";
import { NewConnectionDialog, useNewConnection } from "../../[id]/canvas/new-connection";
import { MissingConnections, PublishProblems, useTemplateCheck } from "./template-check";

const slugOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 60);

/**
 * The template's questions, generated from its fields with the step forms' own form and widgets (connection
 * pickers with "+ New … connection" for owners, member pickers), what the organisation still lacks, the name, and
 * Create: the automation is made with the journey as its draft and opens in the editor. A second click while the
 * first is under way sends nothing; a repeated request is answered with the same automation (core reads it back).
 */
export function TemplateForm({ orgSlug, templateId, canManageConnections }: { orgSlug: string; templateId: string; canManageConnections: boolean }) {
  const template = templateOf(templateId);
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [answers, setAnswers] = useState<unknown>(() => structuredClone(template?.defaults ?? {}));
  const [name, setName] = useState(template?.suggestedName ?? "");
  const [error, setError] = useState<string | null>(null);
  const connections = useQuery(trpc.connections.list.queryOptions({ orgSlug }));
  const members = useQuery(trpc.members.list.queryOptions({ orgSlug }));
  const connection = useNewConnection(orgSlug);
  const check = useTemplateCheck(orgSlug, templateId, answers);
  const create = useMutation(trpc.automations.createFromTemplate.mutationOptions());
  if (!template) return null;
  const built = buildFromTemplate(template, answers);
  const slug = slugOf(name);
  const ctx: FormContext = {
    orgSlug,
    nodeId: `template-${template.id}`,
    graph: { nodes: [] },
    variables: [],
    sample: null,
    connections: (connections.data ?? []).map((c) => ({ name: c.name, kind: c.kind, status: c.status })),
    members: (members.data ?? []).map((m) => ({ email: m.email, name: m.name, role: m.role })),
    canEdit: true,
    // Only owners add connections (they hold the secrets); others are told whom to ask.
    ...(canManageConnections ? { newConnection: connection.newConnection } : {}),
  };
  const submit = async () => {
    setError(null);
    try {
      const { id } = await create.mutateAsync({ orgSlug, templateId: template.id, answers: (answers ?? {}) as Record<string, unknown>, name: name.trim(), slug });
      await reloadAfterWrite(queryClient, trpc.automations.list.queryKey({ orgSlug }));
      router.push(`/automations/${id}?org=${orgSlug}`);
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <div className="stack template-form">
      <h2>Your answers</h2>
      {connections.isSuccess && <MissingConnections orgSlug={orgSlug} fields={template.fields} connections={ctx.connections} canManage={canManageConnections} />}
      {connections.isSuccess && members.isSuccess ? (
        <StepForm module={{ label: template.name, description: template.note, config: template.answers, fields: template.fields }} config={answers} onChange={setAnswers} ctx={ctx} problems={[]} />
      ) : (
        <p className="muted">Loading your connections and members…</p>
      )}
      <PublishProblems problems={built.ok ? (check.data?.publish ?? []) : []} />
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label>
          Name of the new automation
          <input name="automation-name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </label>
        <SubmitButton className="primary" pending={create.isPending || create.isSuccess} disabled={!slug || !built.ok}>
          Create
        </SubmitButton>
        {slug && <span className="small muted">webhook: /api/hooks/{orgSlug}/{slug}</span>}
      </form>
      {!built.ok && (
        <p className="small muted" data-still-to-answer>
          Still to answer: {[...new Set(built.problems.map((p) => p.label))].join(", ")}.
        </p>
      )}
      {error && (
        <p className="flash flash-error" role="alert">
          Not created: {error}
        </p>
      )}
      <NewConnectionDialog orgSlug={orgSlug} creating={connection.creating} onClose={connection.closeCreating} />
    </div>
  );
}
