/**
 * The decide layer: pure rules. The walk (decide/walk/plan.ts is its one door) and the timer rules. No IO; it
 * imports the base and versions layers.
 *
 * `@holdfast/core/decide`: what the apps, the CLI and the tests use of it.
 */
export { instantFor, timerFor, zoneFor, zoneSourceWords } from "./timers/plan";
export { type PreviewInstant, previewWait } from "./timers/preview";
export { dueInstant, instantOf, spreadOffsetSeconds } from "./timers/schedule";
export { type RateInterval, wilson } from "./stats/wilson";
export { evaluate, type WalkContext } from "./walk/condition";
export { choosePath, splitSubject } from "./walk/split";
export { holdsWalk } from "./walk/plan";
export type { Command, RunState } from "./walk/walk";
