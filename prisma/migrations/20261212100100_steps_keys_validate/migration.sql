-- The foreign keys 20261212100000_steps_one_key added back NOT VALID, validated: a scan of approvals, signals and
-- timers that takes SHARE UPDATE EXCLUSIVE on each (writes go on) and ROW SHARE on steps.
ALTER TABLE "approvals" VALIDATE CONSTRAINT "approvals_step_fkey";
ALTER TABLE "signals" VALIDATE CONSTRAINT "signals_step_fkey";
ALTER TABLE "timers" VALIDATE CONSTRAINT "timers_step_id_fkey";
