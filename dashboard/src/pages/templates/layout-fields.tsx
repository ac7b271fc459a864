import { APIError, type Template } from "mailroom";
import { Link } from "wouter";
import { useApi } from "../../api/api-context";
import { collectPages, type Collected } from "../../api/collect-pages";
import { useRequest, type RequestState } from "../../api/use-request";
import { Field } from "../../components/field";
import { SelectOptions } from "../../components/select-options";
import { LAYOUT_CONTENT_SLOT } from "../../lib/templates";

// Only to fill the select; a workspace has a handful of layouts, not hundreds.
const LAYOUTS_CAP = 200;
// Preview with is for trying a layout on some of its templates; past this many it says so.
const SENT_IN_CAP = 200;

/** Where a layout puts each template's content: the one thing its html must say. */
export function ContentSlotHint() {
  return (
    <>
      Place the content of each template with <code>{LAYOUT_CONTENT_SLOT}</code>: in the HTML, and in the Text if you write one.
    </>
  );
}

/** What the server said is wrong with the layout a save named (`422` at `/layout`), once each. */
function layoutProblems(errors: readonly unknown[]): string[] {
  const problems = errors.flatMap((error) =>
    error instanceof APIError && error.status === 422 ? error.errors.flatMap((problem) => (problem.pointer === "/layout" ? [problem.message] : [])) : [],
  );
  return [...new Set(problems)];
}

interface LayoutSelectProps {
  /** The chosen layout's slug, or null for none. */
  value: string | null;
  onChange: (slug: string | null) => void;
  readOnly: boolean;
  /** The last save's and the preview's refusals: their `/layout` problems are shown under the select. */
  errors: readonly unknown[];
}

/**
 * The layout a standard template is sent in: the workspace's layouts (listTemplates with
 * `kind: "layout"`), or None. Part of the draft's content, saved with the other fields.
 */
export function LayoutSelect({ value, onChange, readOnly, errors }: LayoutSelectProps) {
  const api = useApi();
  const layouts = useRequest(
    (signal) => collectPages((after) => api.call((mr) => mr.templates.list({ kind: "layout", limit: 100, ...(after ? { after } : {}) }, { signal })), { cap: LAYOUTS_CAP }),
    [api],
  );
  const options = (layouts.data?.items ?? []).map((layout) => ({
    value: layout.slug,
    // Templates are sent in a layout's published version: one without is of no use yet.
    label: `${layout.name} (${layout.slug})${layout.published_version === null ? ", not published" : ""}`,
  }));
  // The saved layout stays shown while the list loads, or when it is no longer among them.
  if (value !== null && !options.some((option) => option.value === value)) options.unshift({ value, label: value });
  return (
    <Field
      label="Layout"
      hint={
        layouts.error !== undefined ? (
          "The layouts could not be loaded."
        ) : value === null ? (
          "The html around this template's content, shared with other templates. Create one with New template › Layout."
        ) : (
          <>
            Sent inside the published version of <Link href={`/templates/${value}`}>{value}</Link>: publishing the layout changes this template&apos;s mail too.
          </>
        )
      }
      errors={layoutProblems(errors)}
    >
      <select value={value ?? ""} disabled={readOnly} onChange={(event) => onChange(event.target.value === "" ? null : event.target.value)}>
        <SelectOptions empty="None" options={options} />
      </select>
    </Field>
  );
}

/** Why Preview with offers fewer templates than are sent in the layout, if it does. */
function listedNote(sentIn: RequestState<Collected<Template>>): string {
  if (sentIn.error !== undefined) return " The templates sent in this layout could not be loaded.";
  if (sentIn.data?.items.length === 0) return " No template is sent in this layout yet.";
  return sentIn.data?.capped ? ` Only the first ${SENT_IN_CAP} templates sent in it are listed.` : "";
}

interface PreviewWithSelectProps {
  /** The slug of the layout whose page this is. */
  layout: string;
  /** The template to preview in the layout, or null for the layout by itself. */
  value: Template | null;
  onChange: (template: Template | null) => void;
}

/**
 * On a layout's page, what its preview puts where the content goes: nothing, or one of the
 * templates whose published version or draft is sent in it (listTemplates with `layout`), to see
 * what publishing the layout would change.
 */
export function PreviewWithSelect({ layout, value, onChange }: PreviewWithSelectProps) {
  const api = useApi();
  const sentIn = useRequest(
    (signal) => collectPages((after) => api.call((mr) => mr.templates.list({ layout, limit: 100, ...(after ? { after } : {}) }, { signal })), { cap: SENT_IN_CAP }),
    [api, layout],
  );
  const templates = sentIn.data?.items ?? [];
  const options = templates.map((template) => ({ value: template.slug, label: `${template.name} (${template.slug})` }));
  return (
    <Field
      label="Preview with"
      hint={
        <>
          {value === null ? (
            <>
              Rendered with empty content: the content of each template sent in this layout goes where <code>{LAYOUT_CONTENT_SLOT}</code> is.
            </>
          ) : (
            "Its version sent in this layout (its draft, when that is), inside this layout as edited."
          )}
          {listedNote(sentIn)}
        </>
      }
    >
      <select
        value={value?.slug ?? ""}
        disabled={options.length === 0}
        onChange={(event) => onChange(templates.find((template) => template.slug === event.target.value) ?? null)}
      >
        <SelectOptions empty="Empty content" options={options} />
      </select>
    </Field>
  );
}
