import type { ReactNode } from "react";
import type { RenderedTemplate, Template } from "mailroom";
import { Card } from "../../components/card";
import { EmailPreview } from "../../components/email-preview";
import { Field } from "../../components/field";
import { TemplateProblems } from "./template-problems";

interface TemplatePreviewProps {
  /** The page's template: a layout renders by itself with empty content, and has no subject to show. */
  template: Template;
  /** On a layout's page, the Preview with select: a template to render in the layout instead. */
  previewWith?: ReactNode;
  rendered: RenderedTemplate | undefined;
  error: unknown;
  pending: boolean;
  /** The sample values as JSON, as shown in the box. */
  samplesText: string;
  /** Typed by hand, rather than derived from the variables' defaults. */
  samplesEdited: boolean;
  /** Null goes back to the values derived from the defaults. */
  onSamplesChange: (text: string | null) => void;
}

/**
 * Which version the preview shows, and in which version of its layout: the published one, as it
 * sends; or, for a template previewed on its layout's page, the layout's version being edited,
 * which templates send in only once it is the published one.
 */
function renderedLine({ slug, version, layout }: RenderedTemplate, page: Template): string {
  if (slug === page.slug || layout === null) return `Version ${version}${layout === null ? "" : ` in layout ${layout.slug} v${layout.version}`}, as it renders now.`;
  if (layout.version === page.published_version) return `${slug} v${version} in this layout's published v${layout.version}.`;
  return `${slug} v${version} in this layout's v${layout.version}, as it would send once this layout is published.`;
}

/**
 * The template rendered by the server (renderTemplate), as sending would, with sample values, in
 * the message pages' sandboxed preview. After a failure the last good render stays, marked stale,
 * under the problems.
 */
export function TemplatePreview({ template, previewWith, rendered, error, pending, samplesText, samplesEdited, onSamplesChange }: TemplatePreviewProps) {
  const layoutAlone = template.kind === "layout" && rendered?.slug === template.slug;
  return (
    <Card title="Preview" className="template-editor__preview">
      <div className="form">
        {previewWith}
        <Field
          label="Sample values (JSON)"
          hint={samplesEdited ? "Your values. Variables you declare later are not added here." : "From the variables' defaults: edit them to try other values."}
        >
          <textarea className="mono" rows={4} spellCheck={false} value={samplesText} onChange={(event) => onSamplesChange(event.target.value)} />
        </Field>
        {samplesEdited && (
          <div>
            <button type="button" className="button button--small" onClick={() => onSamplesChange(null)}>
              Use the defaults
            </button>
          </div>
        )}
        <p className="template-preview__status muted" role="status" data-testid="preview-status">
          {pending ? "Updating the preview…" : error !== undefined ? "The preview is out of date." : rendered ? renderedLine(rendered, template) : ""}
        </p>
        {error !== undefined && <TemplateProblems error={error} title="The preview could not be made" />}
        {rendered && (
          <div className={error !== undefined ? "template-preview template-preview--stale" : "template-preview"}>
            {!layoutAlone && (
              <p className="template-preview__subject">
                <span className="muted">Subject</span> <strong data-testid="preview-subject">{rendered.subject}</strong>
              </p>
            )}
            <EmailPreview html={rendered.html} text={rendered.text} />
          </div>
        )}
      </div>
    </Card>
  );
}
