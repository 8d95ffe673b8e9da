"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { reloadAfterWrite, useTRPC } from "../../../../server/trpc/client";

/** What happens to runs on a step the new version removed. */
export type Rule = { kind: "move"; to: string } | { kind: "cancel" } | { kind: "stay" };

/**
 * The migration of in-flight runs from version `a` to `b` being drawn up: the step mapping, the rule for removed
 * steps, the dry run (planned: the migration as it was when Dry run was pressed) and the report of the last apply.
 */
export function useMigration(input: { orgSlug: string; automationId: string }, a: number, b: number) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [mapping, setMapping] = useState<Record<string, string>>({});
  const [rule, setRule] = useState<Rule>({ kind: "stay" });
  const migration = { fromVersion: a, toVersion: b, mapping, removed: rule };
  const [planned, setPlanned] = useState<typeof migration | null>(null);
  const plan = useQuery({ ...trpc.migrations.plan.queryOptions({ ...input, migration: planned ?? migration }), enabled: planned !== null });
  const apply = useMutation(trpc.migrations.run.mutationOptions());
  const [report, setReport] = useState<string | null>(null);

  /** A removed step's runs map to this step ("" : the rule applies to them). */
  const mapStep = (id: string, to: string) => {
    setPlanned(null);
    setMapping((m) => {
      const next = { ...m };
      if (to) next[id] = to;
      else delete next[id];
      return next;
    });
  };
  const chooseRule = (next: Rule) => (setPlanned(null), setRule(next));
  const dryRun = () => (setReport(null), setPlanned(migration));
  const applyPlanned = async () => {
    try {
      const r = await apply.mutateAsync({ ...input, migration: planned ?? migration });
      setReport(`Moved ${r.migrated}, cancelled ${r.cancelled}, stayed ${r.stayed}, deferred ${r.deferred} (${r.remaining} left to move).`);
      await reloadAfterWrite(queryClient, trpc.versions.list.queryKey(input));
      await plan.refetch();
    } catch (error) {
      setReport(`Not applied: ${(error as Error).message}`);
    }
  };

  return { mapping, rule, plan, applying: apply.isPending, report, setPlanned, mapStep, chooseRule, dryRun, applyPlanned };
}

export type Migration = ReturnType<typeof useMigration>;
