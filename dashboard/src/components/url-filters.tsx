import type { ReactNode } from "react";
import type { Template } from "mailroom";
import { useSearchParams } from "wouter";
import { useApi } from "../api/api-context";
import { collectPages, type Collected } from "../api/collect-pages";
import { useRequest, type CursorTrail, type RequestState } from "../api/use-request";
import { readForm } from "../lib/forms";
import { PAGE_PARAM } from "../lib/page-trail";
import { Field } from "./field";
import { SelectOptions } from "./select-options";

interface UrlFiltersProps {
  /** The query string the fields were filled from (the page's `useSearchParams()`). */
  params: URLSearchParams;
  /** The fields' names, which are also their query parameters. */
  names: readonly string[];
  /** The fields, each named after its parameter and filled from `params`. */
  children: ReactNode;
}

/**
 * A list's filters, kept in the URL's query string so that a filtered view can be bookmarked and
 * shared: Apply writes the non-empty fields to it (and drops the rest), Clear empties it.
 */
export function UrlFilters({ params, names, children }: UrlFiltersProps) {
  const [, setParams] = useSearchParams();
  const active = names.some((name) => params.has(name));
  // The filters' own part of the query string: the page (PAGE_PARAM) and anything else beside them left out.
  const filters = new URLSearchParams(names.flatMap((name) => params.getAll(name).map((value) => [name, value])));
  return (
    // Keyed by the filters in the URL: the fields show what it says after Back, or after anything
    // else changes them (the message log's search box). Not by the whole query string, so that
    // Next and Previous keep what was typed in the fields and not applied yet.
    <form
      key={filters.toString()}
      className="filters"
      aria-label="Filters"
      onSubmit={(event) => {
        const form = readForm(event);
        setParams(Object.fromEntries(names.map((name) => [name, form.text(name)]).filter(([, value]) => value !== "")));
      }}
    >
      {children}
      <div className="filters__actions">
        <button type="submit" className="button button--primary">
          Apply filters
        </button>
        {active && (
          <button type="button" className="button" onClick={() => setParams({})}>
            Clear filters
          </button>
        )}
      </div>
    </form>
  );
}

/**
 * A paged list's page (usePaged's trail), kept in the query string beside the filters, so that a
 * reload, Back and Forward keep it: Next and Previous each make a history entry. Applying or
 * clearing the filters drops it (the first page of the new view), as does a switch of workspace
 * or environment (forgetPageTrail).
 */
export function useUrlPageTrail(): CursorTrail {
  const [params, setParams] = useSearchParams();
  return {
    cursors: params.getAll(PAGE_PARAM),
    go: (cursors) =>
      setParams((previous) => {
        const next = new URLSearchParams(previous);
        next.delete(PAGE_PARAM);
        for (const cursor of cursors) next.append(PAGE_PARAM, cursor);
        return next;
      }),
  };
}

interface FilterSelectProps {
  /** The query parameter, and the select's name. */
  name: string;
  label: string;
  /** The first option, which filters nothing ("All statuses"). */
  anyLabel: string;
  options: ReadonlyArray<{ value: string; label: string }>;
  params: URLSearchParams;
}

/** One of UrlFilters' fields: pick one value of the parameter, or any. */
export function FilterSelect({ name, label, anyLabel, options, params }: FilterSelectProps) {
  return (
    <Field label={label}>
      <select name={name} defaultValue={params.get(name) ?? ""}>
        <SelectOptions empty={anyLabel} options={options} />
      </select>
    </Field>
  );
}

// Only to fill the Template select; past it, a slug can still be given in the address.
const TEMPLATES_CAP = 200;

export type FilterTemplates = RequestState<Collected<Template>>;

/**
 * The templates TemplateFilter offers: the workspace's standard ones (listTemplates). Layouts are
 * never sent by themselves, so they are no filter: the templates sent in them are. Loaded by the
 * page, outside UrlFilters, whose fields are drawn again whenever the filters in the query string change.
 */
export function useFilterTemplates(): FilterTemplates {
  const api = useApi();
  return useRequest(
    (signal) =>
      collectPages((after) => api.call((mr) => mr.templates.list({ kind: "standard", limit: 100, ...(after ? { after } : {}) }, { signal })), { cap: TEMPLATES_CAP }),
    [api],
  );
}

/** One of UrlFilters' fields: a template by slug (`?template=`), picked from `templates` (useFilterTemplates). */
export function TemplateFilter({ params, templates }: { params: URLSearchParams; templates: FilterTemplates }) {
  const current = params.get("template") ?? "";
  // Without the list, a slug typed in: the filter still works.
  if (templates.error !== undefined) {
    return (
      <Field label="Template" hint="The list of templates could not be loaded: type a template's slug.">
        <input name="template" type="text" defaultValue={current} placeholder="welcome-email" />
      </Field>
    );
  }
  const options = (templates.data?.items ?? []).map((template) => ({ value: template.slug, label: `${template.name} (${template.slug})` }));
  options.sort((a, b) => a.label.localeCompare(b.label));
  // A slug from the address that the list does not have (deleted since, or past the cap) stays chosen.
  if (current && !options.some((option) => option.value === current)) options.unshift({ value: current, label: current });
  // Drawn again once the list arrives: a select picks its default value among the options it has when it mounts.
  return <FilterSelect key={templates.data ? "loaded" : "loading"} name="template" label="Template" anyLabel="All templates" options={options} params={params} />;
}
