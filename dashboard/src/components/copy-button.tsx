import { useState } from "react";

interface CopyButtonProps {
  text: string;
  label?: string;
  /** A fuller name for screen readers and tests when several buttons share a label ("Copy name"). */
  accessibleName?: string;
}

/** Copies `text` to the clipboard and says so; if the browser refuses, says to copy by hand. */
export function CopyButton({ text, label = "Copy", accessibleName }: CopyButtonProps) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState("copied");
    } catch {
      // No clipboard outside a secure context, or permission denied: the text stays selectable.
      setState("failed");
    }
  };
  return (
    <>
      <button type="button" className="button button--small" aria-label={accessibleName} onClick={() => void copy()}>
        {label}
      </button>
      <span role="status" className="copy-status">
        {state === "copied" ? "Copied" : state === "failed" ? "Could not copy: select the text and copy it by hand" : ""}
      </span>
    </>
  );
}
