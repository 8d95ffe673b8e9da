"use client";

import { useState } from "react";

/** A block of text to copy (a request to try), with a Copy button that says it copied. */
export function CopyText({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="stack">
      <code className="block" data-copy-text="1">
        {text}
      </code>
      <div className="row">
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(text).catch(() => {});
            setCopied(true);
          }}
        >
          {label}
        </button>
        {copied && (
          <span className="small" role="status">
            Copied.
          </span>
        )}
      </div>
    </div>
  );
}
