import type { RefObject } from "react";
import type { GraphJson, Problem } from "./graph-model";
import { retryDelayMs, saveOutcome } from "./save-outcome";

export type SaveState = "saved" | "dirty" | "saving" | "busy" | "conflict" | "refused";

/** What a save returns that the editor keeps. */
export type Saved = { revision: number; problems: Problem[] };

/** What the save loop works with: the autosave's refs and setters, the save call and what to do with its answer. */
export interface SaveLoop {
  latest: RefObject<{ graph: GraphJson; text: string }>;
  lastSaved: RefObject<string>;
  revision: RefObject<number>;
  saving: RefObject<boolean>;
  attempts: RefObject<number>;
  retryTimer: RefObject<ReturnType<typeof setTimeout> | null>;
  setState: (state: SaveState) => void;
  setRefusal: (text: string | null) => void;
  save: (graph: GraphJson, baseRevision: number) => Promise<Saved>;
  accept: (saved: Saved, text: string) => void;
  /** After a CONFLICT: whether the draft as stored now is exactly `text` (this tab's save landed). */
  landedAlready: (text: string) => Promise<boolean>;
}

/**
 * Saves until the newest graph is saved, one save at a time, each on the revision the previous one returned
 * (`baseOverride` gives the first one's base instead). A busy server is tried again later by itself; a refusal or a
 * real conflict stops the loop and says so.
 */
export async function runSaveLoop(loop: SaveLoop, baseOverride?: () => Promise<number>): Promise<void> {
  if (loop.saving.current) return; // the running loop picks up the newest graph when its save returns
  loop.saving.current = true;
  if (loop.retryTimer.current) clearTimeout(loop.retryTimer.current);
  loop.retryTimer.current = null;
  let sent = "";
  let again = false;
  try {
    for (let override = baseOverride; ; override = undefined) {
      const { graph, text } = loop.latest.current;
      if (text === loop.lastSaved.current) break;
      sent = text;
      loop.setState("saving");
      const base = override ? await override() : loop.revision.current;
      const saved = await loop.save(graph, base);
      loop.accept(saved, text);
      loop.attempts.current = 0;
    }
    loop.setState("saved");
    loop.setRefusal(null);
  } catch (error) {
    const outcome = saveOutcome(error);
    if (outcome.kind === "conflict" && !(await loop.landedAlready(sent))) {
      loop.setState("conflict");
    } else if (outcome.kind === "refused") {
      loop.setState("refused");
      loop.setRefusal(outcome.text);
    } else if (outcome.kind === "busy") {
      loop.attempts.current += 1;
      loop.setState("busy");
      loop.retryTimer.current = setTimeout(() => void runSaveLoop(loop), retryDelayMs(loop.attempts.current));
    } else {
      // The conflict was this tab's own save: carry on with what was edited since.
      again = true;
    }
  } finally {
    loop.saving.current = false;
  }
  if (again) await runSaveLoop(loop);
}
