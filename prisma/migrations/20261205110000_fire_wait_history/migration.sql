-- "Fire this wait now" (issue 40): an owner ends a real run's wait before its time, with a reason. The run's timeline
-- has it (timer.fired with early and reason), and so does its automation's history: a new action, fire_wait, whose
-- detail names the run, the step and the instant the wait would have ended.
ALTER TABLE "automation_history" DROP CONSTRAINT "automation_history_action_check";
ALTER TABLE "automation_history" ADD CONSTRAINT "automation_history_action_check"
  CHECK ("action" IN ('pause', 'resume', 'archive', 'restore', 'stop_runs', 'fire_wait'));
