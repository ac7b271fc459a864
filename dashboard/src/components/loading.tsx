/** Something is on its way: announced to screen readers, shown with a spinner. */
export function Loading({ label = "Loading…", fullPage = false }: { label?: string; fullPage?: boolean }) {
  return (
    <div role="status" className={fullPage ? "loading loading--page" : "loading"}>
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}
