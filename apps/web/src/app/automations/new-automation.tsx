"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../server/trpc/client";
import { SubmitButton } from "../submit-button";

/** Name a new automation (its slug, and so its webhook, follows the name) and open it in the editor. */
export function NewAutomationForm({ orgSlug }: { orgSlug: string }) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const create = useMutation(trpc.automations.create.mutationOptions());
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 60);
  return (
    <form
      className="filters"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          const { id } = await create.mutateAsync({ orgSlug, name: name.trim(), slug });
          await reloadAfterWrite(queryClient, trpc.automations.list.queryKey({ orgSlug }));
          router.push(`/automations/${id}?org=${orgSlug}`);
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      <label>
        New automation
        <input name="automation-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="Trial follow-up" required maxLength={200} />
      </label>
      <SubmitButton className="primary" pending={create.isPending} disabled={!slug}>
        Create
      </SubmitButton>
      {slug && <span className="small muted">webhook: /api/hooks/{orgSlug}/{slug}</span>}
      {error && <span className="field-error">{error}</span>}
    </form>
  );
}
