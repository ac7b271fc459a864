import { useMemo, useState } from "react";
import { APIError, type Mailroom, type RenderedTemplate, type Template } from "mailroom";
import { useLocation } from "wouter";
import { useApi, useWorkspace, type Api } from "../../api/api-context";
import { useDebouncedRequest } from "../../api/use-debounced-request";
import { useAction, useRequest } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { CodeEditor } from "../../components/code-editor";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { Field } from "../../components/field";
import { PageHeader } from "../../components/page-header";
import { ResourcePage } from "../../components/resource-page";
import { formatDateTime } from "../../lib/format";
import { hasRole } from "../../lib/roles";
import {
  TEMPLATES_SCOPE_NOTE,
  contentOf,
  parseVariableValues,
  previewRenderRequest,
  previewSamples,
  sameContent,
  toRow,
  toVariables,
  type TemplateContent,
  type VariableRow,
} from "../../lib/templates";
import { ContentSlotHint, LayoutSelect, PreviewWithSelect } from "./layout-fields";
import { LayoutBadge, PublishedBadge } from "./template-badges";
import { TemplatePreview } from "./template-preview";
import { problemLines, TemplateProblems } from "./template-problems";
import { TestSendDialog } from "./test-send-dialog";
import { VariablesForm } from "./variables-form";
import { VersionHistory } from "./version-history";

// Long enough that typing does not save and render on every key, short enough to feel live.
const PREVIEW_DELAY_MS = 600;

/** The editor's fields as content to save, or why they cannot be (a default that is not JSON). */
function editedContent(fields: Omit<TemplateContent, "variables">, rows: VariableRow[]): { content: TemplateContent } | { error: unknown } {
  try {
    return { content: { ...fields, variables: toVariables(rows) } };
  } catch (error) {
    return { error };
  }
}

/**
 * updateTemplate's body for the content: an empty text goes back to being derived from the html.
 * A layout has no subject and is not itself sent in a layout: the server refuses either field.
 */
function draftPatch(kind: Template["kind"], content: TemplateContent) {
  const body = { html: content.html, text: content.text === "" ? null : content.text, variables: content.variables };
  return kind === "layout" ? body : { ...body, subject: content.subject, layout: content.layout ?? null };
}

/**
 * Saves the content as the draft when it differs from the template's latest version, and the name
 * when given and changed (in the same request); null when there was nothing to save.
 */
async function saveIfChanged(api: Api, template: Template, content: TemplateContent, { name, signal }: { name?: string; signal?: AbortSignal } = {}): Promise<Template | null> {
  const patch = {
    ...(sameContent(content, contentOf(template)) ? {} : draftPatch(template.kind, content)),
    ...(name !== undefined && name !== template.name ? { name } : {}),
  };
  if (Object.keys(patch).length === 0) return null;
  return api.call((mr: Mailroom) => mr.templates.update(template.slug, patch, { signal }));
}

/** The preview's variables: the sample values as typed, or the derived ones. */
function previewVariables(samplesText: string | null, derived: Record<string, unknown>): Record<string, unknown> {
  return samplesText === null ? derived : parseVariableValues(samplesText, "/samples", "The sample values");
}

/**
 * The preview's error as far as the editors can point at its lines. Another template rendered in
 * this layout (Preview with) reports its own lines and the layout's at the same pointers (the
 * layout's told apart only by their message), so those are listed under the preview, not marked.
 */
function problemsOfThisSource(error: unknown, previewWith: Template | null): unknown {
  return previewWith !== null && error instanceof APIError && error.code === "template_render_failed" ? undefined : error;
}

interface EditorProps {
  template: Template;
  /** The template changed on the server (a save): keep editing. */
  onSaved: (template: Template) => void;
  /** The template was published or rolled back: the editor starts again from it. */
  onReplaced: (template: Template) => void;
}

function TemplateEditor({ template, onSaved, onReplaced }: EditorProps) {
  const api = useApi();
  const { workspace } = useWorkspace();
  const [, navigate] = useLocation();
  const canEdit = hasRole(workspace.role, "developer");
  const [name, setName] = useState(template.name);
  const [subject, setSubject] = useState(template.subject);
  const [html, setHtml] = useState(template.html);
  const [text, setText] = useState(template.text ?? "");
  const [layout, setLayout] = useState(template.layout);
  const [rows, setRows] = useState(() => template.variables.map((variable) => toRow(variable)));
  // Null: derived from the variables' defaults, and following them until edited by hand.
  const [samplesText, setSamplesText] = useState<string | null>(null);
  // On a layout's page: the template the preview renders in it, or null for the layout by itself.
  const [previewWith, setPreviewWith] = useState<Template | null>(null);
  const [publishing, setPublishing] = useState<Template | null>(null);
  const [deleting, setDeleting] = useState<Template | null>(null);
  const [testing, setTesting] = useState(false);

  const isLayout = template.kind === "layout";
  const edited = editedContent({ subject, html, text, layout }, rows);
  const content = "content" in edited ? edited.content : null;
  const dirty = content !== null && !sameContent(content, contentOf(template));
  const samples = previewSamples(content?.variables ?? [], previewWith);
  const shownSamples = samplesText ?? JSON.stringify(samples, null, 2);
  // A layout's slot completes like a variable, though it is none.
  const variableNames = useMemo(() => [...(isLayout ? ["content"] : []), ...rows.map((row) => row.name.trim()).filter(Boolean)], [isLayout, rows]);

  // The preview saves the draft first (so what it shows is what the draft renders, checked by the
  // server's Liquid), then renders it with the sample values. Viewers preview without saving.
  const previewKey = JSON.stringify([content ?? rows, samplesText, previewWith?.slug ?? null]);
  const preview = useDebouncedRequest(
    async (signal): Promise<RenderedTemplate> => {
      if ("error" in edited) throw edited.error;
      let current = template;
      const variables = previewVariables(samplesText, samples);
      if (canEdit) {
        const saved = await saveIfChanged(api, template, edited.content, { signal });
        if (saved) {
          onSaved(saved);
          current = saved;
        }
      }
      const { slug, body } = previewRenderRequest(current, previewWith, variables);
      return api.call((mr) => mr.templates.render(slug, body, { signal }));
    },
    previewKey,
    PREVIEW_DELAY_MS,
  );
  const lineProblems = problemsOfThisSource(preview.error, previewWith);

  const save = useAction(async () => {
    if ("error" in edited) throw edited.error;
    const saved = await saveIfChanged(api, template, edited.content, { name: name.trim() });
    if (saved) onSaved(saved);
  });

  return (
    <>
      <PageHeader
        title={template.name}
        description={TEMPLATES_SCOPE_NOTE}
        actions={
          canEdit && (
            <>
              <ActionButton label="Save draft" pendingLabel="Saving…" pending={save.pending} variant="plain" onClick={() => void save.run()} />
              <button
                type="button"
                className="button button--primary"
                disabled={!template.has_draft && !dirty}
                title={!template.has_draft && !dirty ? "Nothing to publish: the published version is the latest" : undefined}
                onClick={() => setPublishing(template)}
              >
                Publish
              </button>
              {/* A layout is never sent by itself: a template sent in it is. */}
              {!isLayout && (
                <button type="button" className="button" onClick={() => setTesting(true)}>
                  Send a test
                </button>
              )}
              <button type="button" className="button button--danger" onClick={() => setDeleting(template)}>
                Delete
              </button>
            </>
          )
        }
      />
      {!canEdit && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see this template, its versions and its preview. Developers, admins and owners edit and publish templates, and send tests of them.
        </p>
      )}
      <dl className="summary card template-summary">
        <div className="summary__row">
          <dt>Kind</dt>
          <dd data-testid="template-kind">
            {isLayout ? (
              <>
                <LayoutBadge template={template} /> <span className="muted">the html around the templates sent in it; never sent by itself</span>
              </>
            ) : (
              "Standard template"
            )}
          </dd>
        </div>
        <div className="summary__row">
          <dt>Slug</dt>
          <dd className="mono" data-testid="template-slug">
            {template.slug}
          </dd>
        </div>
        <div className="summary__row">
          <dt>Sends</dt>
          <dd>
            <PublishedBadge template={template} />
          </dd>
        </div>
        <div className="summary__row">
          <dt>Draft</dt>
          <dd data-testid="draft-status">
            {dirty ? "Unsaved changes" : template.has_draft ? `v${template.latest_version}, saved ${formatDateTime(template.updated_at)}` : "None: the published version is the latest"}
          </dd>
        </div>
      </dl>
      {save.error !== undefined && <TemplateProblems error={save.error} title="Could not save the draft" />}

      <div className="template-editor">
        <Card title="Content" className="template-editor__source">
          <div className="form">
            {canEdit && (
              <Field label="Name" hint="For people; it changes at once when you save, without a new version.">
                <input value={name} maxLength={200} required onChange={(event) => setName(event.target.value)} />
              </Field>
            )}
            {isLayout ? (
              <p className="field__hint" data-testid="layout-content-hint">
                A layout has no subject: each template sent in it gives its own. <ContentSlotHint />
              </p>
            ) : (
              <>
                <CodeEditor
                  label="Subject"
                  language="liquid"
                  singleLine
                  value={subject}
                  onChange={setSubject}
                  variables={variableNames}
                  readOnly={!canEdit}
                  problemLines={problemLines(lineProblems, "subject")}
                />
                <LayoutSelect value={layout} onChange={setLayout} readOnly={!canEdit} errors={[save.error, preview.error]} />
              </>
            )}
            <CodeEditor
              label="HTML"
              language="liquid-html"
              value={html}
              onChange={setHtml}
              variables={variableNames}
              readOnly={!canEdit}
              problemLines={problemLines(lineProblems, "html")}
            />
            <CodeEditor
              label="Text"
              language="liquid"
              value={text}
              onChange={setText}
              variables={variableNames}
              readOnly={!canEdit}
              problemLines={problemLines(lineProblems, "text")}
            />
            <p className="field__hint">
              Output in the HTML is escaped (<code>{"{{ name }}"}</code> of <code>{"<b>"}</code> shows the characters); pipe it through <code>raw</code>{" "}
              for trusted markup. Leave Text empty to derive it from the HTML.
            </p>
          </div>
        </Card>
        <TemplatePreview
          template={template}
          previewWith={isLayout && <PreviewWithSelect layout={template.slug} value={previewWith} onChange={setPreviewWith} />}
          rendered={preview.data}
          error={preview.error}
          pending={preview.pending}
          samplesText={shownSamples}
          samplesEdited={samplesText !== null}
          onSamplesChange={setSamplesText}
        />
      </div>

      <Card title="Variables" flush>
        <VariablesForm rows={rows} onChange={setRows} readOnly={!canEdit} referenced={template.referenced_variables} />
      </Card>

      {/* Loaded again when a save makes a draft or a publish moves the published version. */}
      <VersionHistory
        key={`${template.latest_version}:${template.published_version}:${template.has_draft}`}
        template={template}
        canEdit={canEdit}
        onRolledBack={onReplaced}
      />

      {/* Sends need a developer, like editing (createMessage's x-mailroom-role). */}
      {canEdit && !isLayout && <TestSendDialog template={template} variablesText={shownSamples} open={testing} onClose={() => setTesting(false)} />}
      <ConfirmDialog
        target={publishing}
        title="Publish this draft?"
        confirmLabel="Publish"
        onClose={() => setPublishing(null)}
        onConfirm={async (target) => {
          if ("error" in edited) throw edited.error;
          await saveIfChanged(api, target, edited.content, { name: name.trim() });
          onReplaced(await api.call((mr) => mr.templates.publish(target.slug)));
        }}
      >
        {(target) => (
          <p>
            {target.kind === "layout" ? <>Every template sent in </> : <>Messages sent with </>}
            <code>{target.slug}</code> {target.kind === "layout" ? "uses" : "use"} this version from now on, in live and in sandbox.
            {target.published_version !== null && <> Version {target.published_version} is archived and can be published again from the history.</>}
          </p>
        )}
      </ConfirmDialog>
      <ConfirmDialog
        target={deleting}
        title={isLayout ? "Delete layout?" : "Delete template?"}
        confirmLabel={isLayout ? "Delete layout" : "Delete template"}
        onClose={() => setDeleting(null)}
        onConfirm={async (target) => {
          await api.call((mr) => mr.templates.delete(target.slug));
          navigate("/templates");
        }}
      >
        {(target) => (
          <p>
            <strong>{target.name}</strong> and all its versions are deleted
            {target.kind === "layout" ? (
              <>. It cannot be while the published version or the draft of a template is sent in it: give those another layout (or none) first.</>
            ) : (
              <>
                , and sending with <code>{target.slug}</code> fails from now on.
              </>
            )}{" "}
            Messages already sent keep their content. This cannot be undone.
          </p>
        )}
      </ConfirmDialog>
    </>
  );
}

/** `/templates/:slug`: the editor, its live preview, the variables, the version history. */
export function TemplatePage({ slug }: { slug: string }) {
  const api = useApi();
  const template = useRequest((signal) => api.call((mr) => mr.templates.get(slug, { signal })), [api, slug]);
  // Bumped when the editor must start again from the server's template (publish, rollback).
  const [revision, setRevision] = useState(0);
  return (
    <ResourcePage back={{ href: "/templates", label: "Templates" }} title="Template" state={template} what="this template">
      {(data) => (
        <TemplateEditor
          key={`${data.id}:${revision}`}
          template={data}
          onSaved={(next) => template.update(() => next)}
          onReplaced={(next) => {
            template.update(() => next);
            setRevision((value) => value + 1);
          }}
        />
      )}
    </ResourcePage>
  );
}
