import type { RenderedTemplate } from "mailroom";
import { Card } from "../../components/card";
import { EmailPreview } from "../../components/email-preview";
import { Field } from "../../components/field";
import { TemplateProblems } from "./template-problems";

interface TemplatePreviewProps {
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
 * The template rendered by the server (renderTemplate), as sending would, with sample values, in
 * the message pages' sandboxed preview. After a failure the last good render stays, marked stale,
 * under the problems.
 */
export function TemplatePreview({ rendered, error, pending, samplesText, samplesEdited, onSamplesChange }: TemplatePreviewProps) {
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
          {pending ? "Updating the preview…" : error !== undefined ? "The preview is out of date." : rendered ? `Version ${rendered.version}, as it renders now.` : ""}
        </p>
        {error !== undefined && <TemplateProblems error={error} title="The preview could not be made" />}
        {rendered && (
          <div className={error !== undefined ? "template-preview template-preview--stale" : "template-preview"}>
            <p className="template-preview__subject">
              <span className="muted">Subject</span> <strong data-testid="preview-subject">{rendered.subject}</strong>
            </p>
            <EmailPreview html={rendered.html} text={rendered.text} />
          </div>
        )}
      </div>
    </Card>
  );
}
