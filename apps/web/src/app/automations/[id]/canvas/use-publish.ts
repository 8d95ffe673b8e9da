"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";
import type { SaveState } from "./use-autosave";

/** Why Publish cannot be pressed now, in words; null when it can. */
export function publishBlockedWhy(o: { canEdit: boolean; publishing: boolean; state: SaveState; problems: number }): string | null {
  const { state, problems } = o;
  if (!o.canEdit) return "Only owners and editors can publish.";
  if (o.publishing) return "Publishing…";
  if (state === "dirty" || state === "saving") return "Saving your changes first…";
  if (state === "busy") return "Waiting for the save to go through…";
  if (state === "conflict") return "Someone else saved meanwhile: keep one version first.";
  if (state === "refused") return "The last change was not saved.";
  if (problems > 0) return `Fix the ${problems === 1 ? "problem" : `${problems} problems`} first (click the count to see ${problems === 1 ? "it" : "them"}).`;
  return null;
}

/** Publish the draft as a new version, and say what came of it. */
export function usePublish(input: { orgSlug: string; automationId: string }, setMessage: (text: string | null) => void) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const publish = useMutation(trpc.versions.publish.mutationOptions());
  const doPublish = async () => {
    setMessage(null);
    try {
      const v = await publish.mutateAsync(input);
      const when = new Date(v.publishedAt).toLocaleString();
      setMessage(v.alreadyPublished ? `Already published: this is version ${v.version} (published ${when}).` : `Published version ${v.version}.`);
      // The published ids are fixed from now on: the draft's published ids come back with it.
      await reloadAfterWrite(queryClient, trpc.versions.list.queryKey(input));
      await reloadAfterWrite(queryClient, trpc.drafts.get.queryKey(input));
    } catch (error) {
      setMessage(`Not published: ${(error as Error).message}`);
    }
  };
  return { publishing: publish.isPending, doPublish };
}
