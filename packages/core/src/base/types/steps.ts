/** steps.status (CHECK steps_status_check). */
export type StepStatus = "ready" | "running" | "waiting" | "parked" | "done" | "failed" | "cancelled";

/** A step as the walk sees it (decide/walk/walk.ts), read straight from the table (store/sql/steps.ts stepsForRun). */
export interface StepState {
  id: string;
  nodeId: string;
  iteration: number;
  status: StepStatus;
  output: unknown;
  error: unknown;
  /** The engine has already walked on from this settled step. */
  advanced: boolean;
  /** A live lease: a worker may be performing the step right now. */
  leased: boolean;
}
