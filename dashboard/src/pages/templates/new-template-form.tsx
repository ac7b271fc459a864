import { useState } from "react";
import type { CreateTemplateParams, Template } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { readForm } from "../../lib/forms";
import { LAYOUT_CONTENT_SLOT, slugify } from "../../lib/templates";
import { ContentSlotHint } from "./layout-fields";

// A new template starts as a draft that already renders, and shows Liquid and a declared
// variable at work: the editor's preview has something to show from the first keystroke.
const STARTER_HTML = "<p>Hello {{ first_name }},</p>\n<p>Thanks for signing up.</p>";
const STARTER_VARIABLES = [{ name: "first_name", type: "string" as const, required: false, default: "there", description: "The recipient's first name" }];
// A layout must place the content (the server refuses one that does not): the starter shows where.
const LAYOUT_STARTER_HTML = `<div style="max-width: 600px; margin: 0 auto; font-family: sans-serif;">\n  ${LAYOUT_CONTENT_SLOT}\n  <p style="color: #6b7280; font-size: 12px;">Your footer: who sends this, and why.</p>\n</div>`;

type Kind = Template["kind"];

/** createTemplate's body for a name and slug: a standard template's starter, or a layout's (no subject). */
function starter(kind: Kind, params: { name: string; slug: string }): CreateTemplateParams {
  return kind === "layout" ? { ...params, kind, html: LAYOUT_STARTER_HTML } : { ...params, subject: params.name, html: STARTER_HTML, variables: STARTER_VARIABLES };
}

/** createTemplate: a kind, a name and a permanent slug; the content is written in the editor after. */
export function NewTemplateForm({ onCreated, onCancel }: { onCreated: (template: Template) => void; onCancel: () => void }) {
  const api = useApi();
  const [kind, setKind] = useState<Kind>("standard");
  const [name, setName] = useState("");
  // The slug follows the name until it is edited by hand.
  const [slug, setSlug] = useState<string | null>(null);
  const create = useAction(async (params: { name: string; slug: string }) => {
    onCreated(await api.call((mr) => mr.templates.create(starter(kind, params))));
  });
  return (
    <form
      onSubmit={(event) => {
        const form = readForm(event);
        void create.run({ name: form.text("name"), slug: form.text("slug") });
      }}
    >
      <div className="dialog__body form">
        <p>
          A template is a message written in Liquid (<code>{"{{ first_name }}"}</code>), sent by its slug. It starts as a draft: nothing sends it until
          you publish it.
        </p>
        <Field
          label="Kind"
          hint={
            kind === "layout" ? (
              <>
                The html around the content of the templates that choose it (a header, a footer, styles), with no subject, never sent by itself.{" "}
                <ContentSlotHint />
              </>
            ) : (
              "A message of its own, which may be sent in a layout. The kind cannot be changed later."
            )
          }
        >
          <select name="kind" value={kind} onChange={(event) => setKind(event.target.value === "layout" ? "layout" : "standard")}>
            <option value="standard">Standard template</option>
            <option value="layout">Layout</option>
          </select>
        </Field>
        <Field label="Name" hint="For people, e.g. “Welcome email”.">
          <input name="name" required maxLength={200} autoComplete="off" value={name} onChange={(event) => setName(event.target.value)} />
        </Field>
        <Field
          label="Slug"
          hint={
            <>
              {kind === "layout" ? (
                <>
                  How templates name it: <code>{'layout: "base"'}</code>.
                </>
              ) : (
                <>
                  How your code names it: <code>template: {"{ slug: \"welcome\" }"}</code>.
                </>
              )}{" "}
              Lowercase letters, digits and hyphens. It cannot be changed later.
            </>
          }
        >
          <input
            name="slug"
            required
            maxLength={64}
            pattern="[a-z0-9]+(-[a-z0-9]+)*"
            autoComplete="off"
            spellCheck={false}
            value={slug ?? slugify(name)}
            onChange={(event) => setSlug(event.target.value)}
          />
        </Field>
      </div>
      {create.error !== undefined && <ErrorState error={create.error} title="Could not create the template" compact />}
      <DialogActions onCancel={onCancel} pending={create.pending}>
        <ActionButton label={kind === "layout" ? "Create layout" : "Create template"} pendingLabel="Creating…" pending={create.pending} />
      </DialogActions>
    </form>
  );
}
