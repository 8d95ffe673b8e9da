/** What an automation counts as its goal (automations.goal): the contact replied, clicked, or a goal event came. */
export type Goal = "replied" | "clicked" | "event";

export const goals: readonly Goal[] = ["replied", "clicked", "event"];

/** Each goal in a marketer's words (the run's timeline and page, the automation's goal form). Pure: pages import it. */
export const goalWords: Record<Goal, string> = {
  replied: "the contact replied",
  clicked: "the contact clicked a link",
  event: "a goal event arrived for the contact",
};
