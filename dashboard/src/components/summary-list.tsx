import type { ReactNode } from "react";

/** A resource's key facts on a card, as a description list of label and value rows. */
export function SummaryList({ children }: { children: ReactNode }) {
  return <dl className="summary card">{children}</dl>;
}

export function SummaryRow({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="summary__row">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
