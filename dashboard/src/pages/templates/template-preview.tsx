import type { RenderedTemplate, Template } from "mailroom";
import { Card } from "../../components/card";
import { EmailPreview } from "../../components/email-preview";
import { Field } from "../../components/field";
import { LAYOUT_CONTENT_SLOT } from "../../lib/templates";
import { TemplateProblems } from "./template-problems";

interface TemplatePreviewProps {
  /** A layout renders with empty content, and has no subject to show. */
  kind: Template["kind"];
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

/** Which version the preview shows, and in which version of its layout (the published one, as it sends). */
function renderedLine({ version, layout }: RenderedTemplate): string {
  return `Version ${version}${layout === null ? "" : ` in layout ${layout.slug} v${layout.version}`}, as it renders now.`;
}

/**
 * The template rendered by the server (renderTemplate), as sending would, with sample values, in
 * the message pages' sandboxed preview. After a failure the last good render stays, marked stale,
 * under the problems.
 */
export function TemplatePreview({ kind, rendered, error, pending, samplesText, samplesEdited, onSamplesChange }: TemplatePreviewProps) {
  return (
    <Card title="Preview" className="template-editor__preview">
      <div className="form">
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
          {pending ? "Updating the preview…" : error !== undefined ? "The preview is out of date." : rendered ? renderedLine(rendered) : ""}
        </p>
        {kind === "layout" && (
          <p className="field__hint">
            Rendered with empty content: the content of each template sent in this layout goes where <code>{LAYOUT_CONTENT_SLOT}</code> is.
          </p>
        )}
        {error !== undefined && <TemplateProblems error={error} title="The preview could not be made" />}
        {rendered && (
          <div className={error !== undefined ? "template-preview template-preview--stale" : "template-preview"}>
            {kind === "standard" && (
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
