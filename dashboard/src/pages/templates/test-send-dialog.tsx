import { useState } from "react";
import type { Message, MessagePreview, Template } from "mailroom";
import { Link } from "wouter";
import { useApi } from "../../api/api-context";
import { useDebouncedRequest } from "../../api/use-debounced-request";
import { useAction, useRequest } from "../../api/use-request";
import { useSession } from "../../auth/session";
import { DialogActions } from "../../components/action-button";
import { Dialog } from "../../components/dialog";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { useFieldMarks } from "../../components/use-field-marks";
import { ENVIRONMENT_LABELS, type Environment } from "../../lib/environment";
import { formatCount } from "../../lib/format";
import { retrySafeRequests } from "../../lib/idempotent-attempt";
import { VariableInputError } from "../../lib/templates";
import { problemFields, problemsAt, recipientOutlook, testSendBody, type TestSendField, type TestSendForm } from "../../lib/test-send";

// As the editor's preview: typing does not check on every key.
const CHECK_DELAY_MS = 600;

interface TestSendDialogProps {
  template: Template;
  /** The variables to start from: the page's sample values, as JSON. */
  variablesText: string;
  open: boolean;
  onClose: () => void;
}

/** "Send a test" on the template page: the template by slug, checked (previewMessage), then sent (createMessage). */
export function TestSendDialog({ template, variablesText, open, onClose }: TestSendDialogProps) {
  return (
    <Dialog open={open} title="Send a test" onClose={onClose} testId="test-send-dialog">
      {/* Rendered only while open: each opening starts again from the page's sample values. */}
      <TestSend template={template} variablesText={variablesText} onClose={onClose} />
    </Dialog>
  );
}

function TestSend({ template, variablesText, onClose }: Omit<TestSendDialogProps, "open">) {
  const api = useApi();
  const { session } = useSession();
  const [form, setForm] = useState<TestSendForm>({ to: session.user?.email ?? "", from: "", variablesText });
  const requests = retrySafeRequests("sendTemplateTest", api);
  const [sent, setSent] = useState<Message | null>(null);
  // Every member may read the workspace; it only names the default sender in the From field.
  const workspace = useRequest((signal) => api.call((mr) => mr.workspace.get({ signal })), [api]);
  const defaultFrom = workspace.data?.default_from ?? null;

  // The check is the send's dry run with the same body: the same validation, template, variables,
  // sender and (in live) domain and quota checks, and what would happen to each recipient.
  const check = useDebouncedRequest(
    async (signal) => api.call((mr) => mr.messages.preview(testSendBody(template.slug, form), { signal })),
    JSON.stringify([api.environment, form]),
    CHECK_DELAY_MS,
  );
  const checked = !check.pending && check.error === undefined ? check.data : undefined;

  const send = useAction(async () => {
    const body = testSendBody(template.slug, form);
    setSent(await requests.send(body, (idempotencyKey) => api.call((mr) => mr.messages.create(body, { idempotencyKey }))));
  });
  // As in the other forms, a field's problem is shown once it is the member's business: after a
  // press of Send, or once they have been in the field (changed it, or left it). Until then a
  // check that fails on untouched fields only (the From a workspace without a default sender
  // needs) says nothing against them, and Send stays enabled to show them.
  const touched = useFieldMarks<TestSendField>();
  const [tried, setTried] = useState(false);
  const shown = (field: TestSendField) => tried || touched.has(field);
  const edit = (field: TestSendField, patch: Partial<TestSendForm>) => {
    touched.mark(field);
    setForm((previous) => ({ ...previous, ...patch }));
    send.reset();
  };
  const checkError = check.pending ? undefined : check.error;
  const waiting = checkError !== undefined && !problemFields(checkError).some((field) => field === "template" || field === null || shown(field));
  // The send's refusal, else the check's: both answer for the body as it is now.
  const problem = send.error ?? (waiting ? undefined : checkError);
  const problemsOf = (field: TestSendField) => (field === "template" || shown(field) ? problemsAt(problem, field) : []);

  return (
    <form
      onSubmit={(event) => {
        event.preventDefault();
        setTried(true);
        if (checked) void send.run();
      }}
    >
      <div className="dialog__body form test-send">
        <TemplateLine template={template} environment={api.environment} problems={problemsOf("template")} />
        <Field label="To" errors={problemsOf("to")}>
          <input
            value={form.to}
            required
            autoComplete="email"
            spellCheck={false}
            onChange={(event) => edit("to", { to: event.target.value })}
            onBlur={() => touched.mark("to")}
          />
        </Field>
        <Field
          label="From (optional)"
          hint={
            defaultFrom
              ? "Empty: the workspace's default sender."
              : workspace.data
                ? "This workspace has no default sender (Settings), so give one here."
                : "Empty: the workspace's default sender, if it has one."
          }
          errors={problemsOf("from")}
        >
          <input
            value={form.from}
            placeholder={defaultFrom ?? "Needed: no default sender, e.g. Acme <hello@acme.example>"}
            spellCheck={false}
            onChange={(event) => edit("from", { from: event.target.value })}
            onBlur={() => touched.mark("from")}
          />
        </Field>
        <Field label="Variables (JSON)" hint="From the preview's sample values; checked against the variables of the version sent." errors={problemsOf("variables")}>
          <textarea
            className="mono"
            rows={4}
            spellCheck={false}
            value={form.variablesText}
            onChange={(event) => edit("variables", { variablesText: event.target.value })}
            onBlur={() => touched.mark("variables")}
          />
        </Field>
        <CheckResult preview={check.data} stale={checked === undefined} pending={check.pending} failed={check.error !== undefined} waiting={waiting} environment={api.environment} />
        {sent && (
          <p className="notice notice--success" role="status" data-testid="test-send-result">
            Sent: <Link href={`/messages/${sent.id}`}>see the message</Link> (<code>{sent.id}</code>, {sent.status}).
          </p>
        )}
      </div>
      {problem !== undefined && !(problem instanceof VariableInputError) && (
        <ErrorState error={problem} title={send.error === undefined ? "This would not be sent" : "Could not send"} compact />
      )}
      <DialogActions onCancel={onClose} cancelLabel={sent ? "Close" : "Cancel"} pending={send.pending}>
        {/* Only once the check has passed for the body as it is: what is sent is what was checked.
            Enabled too while its problems wait for a try, which shows them and sends nothing. */}
        <button type="submit" className="button button--primary" disabled={send.pending || (!checked && !waiting)}>
          {send.pending ? "Sending…" : sent ? "Send again" : "Send"}
        </button>
      </DialogActions>
    </form>
  );
}

/** Which version goes out, in which environment; a template never published cannot be sent. */
function TemplateLine({ template, environment, problems }: { template: Template; environment: Environment; problems: string[] }) {
  const live = environment === "live";
  return (
    <div className="test-send__template" data-testid="test-send-template">
      <p>
        <EnvironmentBadge environment={environment} />{" "}
        Sends <code>{template.slug}</code> by its slug, as your code would, so its published version goes out:{" "}
        {template.published_version === null ? (
          <>it has none yet. Publish it first.</>
        ) : (
          <>
            v{template.published_version}
            {template.has_draft && " (not your draft)"}.
          </>
        )}{" "}
        {live ? "Real email, counted in the monthly quota." : "Nothing is delivered: the simulator decides each recipient's outcome."}
      </p>
      {problems.length > 0 && (
        <ul className="plain-list field__errors">
          {problems.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function EnvironmentBadge({ environment }: { environment: Environment }) {
  return <span className={`env-badge env-badge--${environment}`}>{ENVIRONMENT_LABELS[environment]}</span>;
}

interface CheckResultProps {
  preview: MessagePreview | undefined;
  /** The preview is of an earlier body (a check waits or failed since). */
  stale: boolean;
  pending: boolean;
  failed: boolean;
  /** It failed on fields not touched yet: their problems wait for a press of Send. */
  waiting: boolean;
  environment: Environment;
}

/** previewMessage's answer: the rendered subject, the sender, what happens to each recipient, the size. */
function CheckResult({ preview, stale, pending, failed, waiting, environment }: CheckResultProps) {
  return (
    <section className="test-send__check" aria-label="Check">
      <p className="template-preview__status muted" role="status" data-testid="test-send-status">
        {pending ? "Checking…" : waiting ? "Fill in what is needed, then press Send." : failed ? "It would not be sent: see the problems." : preview ? "Checked: it would be sent as follows." : ""}
      </p>
      {preview && (
        <div className={stale ? "template-preview--stale" : undefined}>
          <dl className="summary">
            <div className="summary__row">
              <dt>Subject</dt>
              <dd data-testid="test-send-subject">{preview.subject}</dd>
            </div>
            <div className="summary__row">
              <dt>From</dt>
              <dd>{preview.from}</dd>
            </div>
            <div className="summary__row">
              <dt>Size</dt>
              <dd>{formatCount(preview.size_bytes)} bytes</dd>
            </div>
          </dl>
          <ul className="plain-list test-send__recipients">
            {preview.recipients.map((recipient) => {
              const outlook = recipientOutlook(recipient, environment);
              return (
                <li
                  key={`${recipient.type}:${recipient.email}`}
                  className={outlook.kind === "suppressed" ? "notice notice--warning" : "test-send__recipient"}
                  data-testid="test-send-recipient"
                >
                  <strong>{recipient.email}</strong>{" "}
                  {outlook.kind === "suppressed" ? <span>{outlook.text}</span> : <><EnvironmentBadge environment={outlook.kind} /> {outlook.text}</>}
                </li>
              );
            })}
          </ul>
        </div>
      )}
    </section>
  );
}
