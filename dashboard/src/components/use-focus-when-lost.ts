import { useEffect, type RefObject } from "react";

/**
 * Moves the keyboard's focus to `target` (a line saying what became of something) each time
 * `reason` becomes another non-null value, if the focus was lost to the page's <body>: the
 * control that had it took itself away (Send now, Cancel message). Focus that went elsewhere
 * meanwhile stays there.
 */
export function useFocusWhenLost(target: RefObject<HTMLElement | null>, reason: string | null): void {
  useEffect(() => {
    const lost = document.activeElement === null || document.activeElement === document.body;
    if (reason !== null && lost) target.current?.focus();
  }, [target, reason]);
}
