import type { Story } from "@holdfast/core/story";
import { toneMark } from "./words";

/** The story as sentences, one per step taken, in order. */
export function WhatHappened({ sentences }: { sentences: Story["sentences"] }) {
  return (
    <section aria-label="what happened">
      <h2>What happened</h2>
      {sentences.length === 0 ? (
        <p className="empty muted">Nothing yet: the run has just started.</p>
      ) : (
        <ol className="story">
          {sentences.map((s) => (
            <li key={`${s.at.toISOString()} ${s.text}`} className={`tone-${s.tone}`} data-node={s.nodeId || undefined}>
              <span className="tone-mark" aria-hidden="true">
                {toneMark[s.tone]}
              </span>{" "}
              {s.text}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
