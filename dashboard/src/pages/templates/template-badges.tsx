import type { Template, TemplateVersionState } from "mailroom";
import { VERSION_STATE_LABELS } from "../../lib/templates";

/** Which version sends, and whether unpublished edits wait: "v2" and a "Draft" badge. */
export function PublishedBadge({ template }: { template: Pick<Template, "published_version" | "has_draft"> }) {
  return (
    <span className="template-state" data-testid="template-published">
      {template.published_version === null ? <span className="muted">Not published</span> : <span className="mono">v{template.published_version}</span>}
      {template.has_draft && <VersionStateBadge state="draft" />}
    </span>
  );
}

export function VersionStateBadge({ state }: { state: TemplateVersionState }) {
  return <span className={`badge badge--version-${state}`}>{VERSION_STATE_LABELS[state]}</span>;
}

/** Beside a layout's name: it wraps the templates sent in it and is never sent by itself. */
export function LayoutBadge({ template }: { template: Pick<Template, "kind"> }) {
  return template.kind === "layout" ? (
    <span className="badge badge--kind-layout" data-testid="layout-badge">
      Layout
    </span>
  ) : null;
}
