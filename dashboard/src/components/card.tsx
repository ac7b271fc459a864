import { useId, type ReactNode } from "react";

interface CardProps {
  /** The section's h2, which also names it as a region. */
  title: string;
  /** Tables run edge to edge; the title gets a rule under it. */
  flush?: boolean;
  className?: string;
  children: ReactNode;
}

/** A titled section of a page on a white card. */
export function Card({ title, flush = false, className, children }: CardProps) {
  const titleId = useId();
  const classes = ["card", flush ? "card--flush" : "", className ?? ""].filter(Boolean).join(" ");
  return (
    <section className={classes} aria-labelledby={titleId}>
      <h2 id={titleId} className={flush ? "card__title" : undefined}>
        {title}
      </h2>
      {children}
    </section>
  );
}
