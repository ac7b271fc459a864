import { useId, useRef, useState, type KeyboardEvent, type ReactNode } from "react";

interface TabsProps<Id extends string> {
  /** Names the tab list for assistive technology ("Message content"). */
  label: string;
  tabs: readonly { id: Id; label: string }[];
  initial?: Id;
  children: (selected: Id) => ReactNode;
}

/** WAI-ARIA tabs: one panel shown at a time; arrow keys move between tabs. */
export function Tabs<Id extends string>({ label, tabs, initial, children }: TabsProps<Id>) {
  const [selected, setSelected] = useState<Id>(initial ?? (tabs[0] as { id: Id }).id);
  const baseId = useId();
  const listRef = useRef<HTMLDivElement>(null);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== "ArrowRight" && event.key !== "ArrowLeft") return;
    const index = tabs.findIndex((tab) => tab.id === selected);
    const next = tabs[(index + (event.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
    if (!next) return;
    setSelected(next.id);
    listRef.current?.querySelector<HTMLElement>(`#${CSS.escape(`${baseId}-tab-${next.id}`)}`)?.focus();
  };

  return (
    <div className="tabs">
      <div role="tablist" aria-label={label} className="tabs__list" ref={listRef} onKeyDown={onKeyDown}>
        {tabs.map((tab) => (
          <button
            key={tab.id}
            type="button"
            role="tab"
            id={`${baseId}-tab-${tab.id}`}
            aria-selected={tab.id === selected}
            aria-controls={`${baseId}-panel`}
            tabIndex={tab.id === selected ? 0 : -1}
            className="tabs__tab"
            onClick={() => setSelected(tab.id)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${baseId}-panel`} aria-labelledby={`${baseId}-tab-${selected}`} className="tabs__panel">
        {children(selected)}
      </div>
    </div>
  );
}
