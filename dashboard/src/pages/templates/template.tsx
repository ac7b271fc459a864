import { useEffect, useId, useMemo, useRef, useState } from "react";
import { APIError, type Mailroom, type RenderedTemplate, type Template } from "mailroom";
import { useLocation } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
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
  draftUpdate,
  parseVariableValues,
  previewRenderRequest,
  previewSamples,
  sameContent,
  savedDespite,
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

/** Someone else saved or published the template since the editor read it (the base_revision of updateTemplate or publishTemplate). */
function isTemplateChanged(error: unknown): error is APIError {
  return error instanceof APIError && error.code === "template_changed";
}

/** What a 409 template_changed refused: a save, the draft's publish, or a rollback to `version`. */
type Refused = { action: "save" } | { action: "publish" } | { action: "rollback"; version: number };

/** For a confirm dialog: a template_changed is told by the page's notice (and closes the dialog), any other error by the dialog. */
function unlessTemplateChanged(error: unknown): void {
  if (!isTemplateChanged(error)) throw error;
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
  /**
   * The sample values typed by hand, or null while they follow the variables' defaults. Kept by
   * the page, not the editor, so that they outlive the editor's fresh start after a publish or
   * rollback: Send a test, pressed next, starts from them.
   */
  samplesText: string | null;
  onSamplesTextChange: (text: string | null) => void;
}

function TemplateEditor({ template, onSaved, onReplaced, samplesText, onSamplesTextChange: setSamplesText }: EditorProps) {
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
  // On a layout's page: the template the preview renders in it, or null for the layout by itself.
  const [previewWith, setPreviewWith] = useState<Template | null>(null);
  const [publishing, setPublishing] = useState<Template | null>(null);
  const [deleting, setDeleting] = useState<Template | null>(null);
  const [testing, setTesting] = useState(false);
  // The template as the server last answered this editor: each save is based on its revision.
  const latest = useRef(template);
  // Saves, publishes and rollbacks run one after the other, each based on the answer to the one before.
  const saving = useRef<Promise<unknown>>(Promise.resolve());
  // A save, publish or rollback refused because someone else saved or published meanwhile (409
  // template_changed): saving stops, the editors keep what was typed, and a notice offers the
  // newer version.
  const [conflict, setConflict] = useState<{ error: APIError; refused: Refused } | null>(null);
  const [reloading, setReloading] = useState<Template | null>(null);
  const notice = useRef<HTMLDivElement>(null);
  // A rollback is started from the history, far below the notice: show it where it is.
  useEffect(() => {
    if (conflict?.refused.action === "rollback") notice.current?.scrollIntoView({ block: "center" });
  }, [conflict]);

  /**
   * Runs `work` after the saves and publishes sent before it, and shows the notice when the
   * server refuses it as based on an older revision. Never aborted once sent: the server may have
   * stored it, and the next request, based on the revision before, would be refused as someone
   * else's change.
   */
  const inTurn = <T,>(refused: Refused, work: () => Promise<T>): Promise<T> => {
    const run = saving.current.then(async () => {
      try {
        return await work();
      } catch (error) {
        if (isTemplateChanged(error)) setConflict({ error, refused });
        throw error;
      }
    });
    saving.current = run.catch(() => undefined);
    return run;
  };

  /** Saves on the template as last answered (see inTurn); answers it as saved. */
  const saveOnLatest = async (content: TemplateContent, options: { name?: string; check?: boolean }): Promise<Template> => {
    const body = draftUpdate(latest.current, content, options);
    if (body === null) return latest.current;
    const { slug } = latest.current;
    const saved = await api
      .call((mr: Mailroom) => mr.templates.update(slug, body))
      .catch((error: unknown) => savedDespite(error, () => api.call((mr) => mr.templates.get(slug)), content, options));
    latest.current = saved;
    onSaved(saved);
    return saved;
  };

  /** Saves the content (and the name, when given), in turn, and answers the template as saved. */
  const saveDraft = (content: TemplateContent, options: { name?: string; check?: boolean } = {}): Promise<Template> =>
    inTurn({ action: "save" }, () => saveOnLatest(content, options));

  const isLayout = template.kind === "layout";
  const edited = editedContent({ subject, html, text, layout }, rows);
  const content = "content" in edited ? edited.content : null;
  const dirty = content !== null && !sameContent(content, contentOf(template));
  // Publish is disabled while there is nothing to publish; the Draft row says why in words, and
  // Publish names that row with aria-describedby (a tooltip is never shown to a keyboard or a touch screen).
  const nothingToPublish = !template.has_draft && !dirty;
  const draftStatusId = useId();
  const samples = previewSamples(content?.variables ?? [], previewWith);
  const shownSamples = samplesText ?? JSON.stringify(samples, null, 2);
  // A layout's slot completes like a variable, though it is none.
  const variableNames = useMemo(() => [...(isLayout ? ["content"] : []), ...rows.map((row) => row.name.trim()).filter(Boolean)], [isLayout, rows]);

  /**
   * Publishes, in turn, what the editors hold (saved first when it differs), or with `version`
   * that earlier version (a rollback; the draft is kept). Based on the revision this page last got
   * (base_revision), checked by the server as it publishes: a draft or a version someone else
   * saved or published since is never published, or rolled back over, unseen.
   */
  const publishOnLatest = (version: number | null): Promise<void> =>
    inTurn(version === null ? { action: "publish" } : { action: "rollback", version }, async () => {
      if (version === null) {
        if ("error" in edited) throw edited.error;
        await saveOnLatest(edited.content, { name: name.trim() });
      }
      const body = { ...(version === null ? {} : { version }), base_revision: latest.current.revision };
      onReplaced(await api.call((mr) => mr.templates.publish(latest.current.slug, body)));
    });

  // The preview saves the draft first (so what it shows is what the draft renders, checked by the
  // server's Liquid), then renders it with the sample values. Viewers preview without saving.
  const previewKey = JSON.stringify([content ?? rows, samplesText, previewWith?.slug ?? null, conflict !== null]);
  const preview = useDebouncedRequest(
    async (signal): Promise<RenderedTemplate> => {
      if ("error" in edited) throw edited.error;
      // What the server has is not what the editors show, and is not saved over without asking.
      if (conflict !== null) throw conflict.error;
      let current = template;
      const variables = previewVariables(samplesText, samples);
      if (canEdit) current = await saveDraft(edited.content);
      const { slug, body } = previewRenderRequest(current, previewWith, variables);
      return api.call((mr) => mr.templates.render(slug, body, { signal }));
    },
    previewKey,
    PREVIEW_DELAY_MS,
  );
  const lineProblems = problemsOfThisSource(preview.error, previewWith);

  const save = useAction(async () => {
    if ("error" in edited) throw edited.error;
    await saveDraft(edited.content, { name: name.trim() });
  });

  // Saves the editor's content over the newer version, on the user's word.
  const overwrite = useAction(async () => {
    if ("error" in edited) throw edited.error;
    const newer = await api.call((mr) => mr.templates.get(template.slug));
    latest.current = newer;
    onSaved(newer);
    setConflict(null);
    await saveDraft(edited.content, { name: name.trim(), check: true });
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
                disabled={nothingToPublish}
                aria-describedby={nothingToPublish ? draftStatusId : undefined}
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
          <dd id={draftStatusId} data-testid="draft-status">
            {dirty
              ? "Unsaved changes"
              : template.has_draft
                ? `v${template.latest_version}, saved ${formatDateTime(template.updated_at)}`
                : `None: the editors show the published version${canEdit ? ", so there is nothing to publish." : "."}`}
          </dd>
        </div>
      </dl>
      {conflict !== null && (
        <div className="notice notice--warning" role="alert" data-testid="template-changed" ref={notice}>
          <p>
            <strong>Someone else changed this template since you opened it</strong> (a draft saved or a version published, in the dashboard or through
            the API). <RefusedNote refused={conflict.refused} /> Saving has stopped so that their changes are not overwritten. What you typed stays in
            the editors: copy what you want to keep, then load the newer version, or save yours over it.
          </p>
          <div className="form__actions">
            <button type="button" className="button" onClick={() => setReloading(template)}>
              Load the newer version
            </button>
            <ActionButton label="Save mine over it" pendingLabel="Saving…" pending={overwrite.pending} variant="plain" onClick={() => void overwrite.run()} />
          </div>
          {overwrite.error !== undefined && !isTemplateChanged(overwrite.error) && <TemplateProblems error={overwrite.error} title="Could not save the draft" />}
        </div>
      )}
      {save.error !== undefined && !isTemplateChanged(save.error) && <TemplateProblems error={save.error} title="Could not save the draft" />}

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
        onRollBack={(version) => publishOnLatest(version).catch(unlessTemplateChanged)}
      />

      {/* Sends need a developer, like editing (createMessage's x-mailroom-role). */}
      {canEdit && !isLayout && <TestSendDialog template={template} variablesText={shownSamples} open={testing} onClose={() => setTesting(false)} />}
      <ConfirmDialog
        target={publishing}
        title="Publish this draft?"
        confirmLabel="Publish"
        onClose={() => setPublishing(null)}
        onConfirm={() => publishOnLatest(null).catch(unlessTemplateChanged)}
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
        target={reloading}
        title="Load the newer version?"
        confirmLabel="Discard my changes and load"
        onClose={() => setReloading(null)}
        onConfirm={async (target) => {
          onReplaced(await api.call((mr) => mr.templates.get(target.slug)));
        }}
      >
        {() => <p>The editors show the template as it is saved now. What you typed here since your last save is discarded: copy it first if you want to keep it.</p>}
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

/** What the notice says was not done. */
function RefusedNote({ refused }: { refused: Refused }) {
  if (refused.action === "publish") return <>Nothing was published: the draft saved now is not the one you see here.</>;
  if (refused.action === "rollback") return <>Version {refused.version} was not published again: what sends now is not what this page showed.</>;
  return <>Your changes here are not saved.</>;
}

/** `/templates/:slug`: the editor, its live preview, the variables, the version history. */
export function TemplatePage({ slug }: { slug: string }) {
  const api = useApi();
  const template = useRequest((signal) => api.call((mr) => mr.templates.get(slug, { signal })), [api, slug]);
  // Bumped when the editor must start again from the server's template (publish, rollback).
  const [revision, setRevision] = useState(0);
  // Sample values typed by hand, for the template they were typed for (null text: derived from the
  // variables' defaults, and following them until edited by hand).
  const [samples, setSamples] = useState<{ templateId: string; text: string } | null>(null);
  return (
    <ResourcePage back={{ href: "/templates", label: "Templates" }} title="Template" state={template} what="this template">
      {(data) => (
        <TemplateEditor
          key={`${data.id}:${revision}`}
          template={data}
          samplesText={samples?.templateId === data.id ? samples.text : null}
          onSamplesTextChange={(text) => setSamples(text === null ? null : { templateId: data.id, text })}
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
