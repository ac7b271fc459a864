import { useState } from "react";
import type { Template } from "mailroom";
import { useApi } from "../../api/api-context";
import { useAction } from "../../api/use-request";
import { ActionButton, DialogActions } from "../../components/action-button";
import { ErrorState } from "../../components/error-state";
import { Field } from "../../components/field";
import { readForm } from "../../lib/forms";
import { slugify } from "../../lib/templates";

// A new template starts as a draft that already renders, and shows Liquid and a declared
// variable at work: the editor's preview has something to show from the first keystroke.
const STARTER_HTML = "<p>Hello {{ first_name }},</p>\n<p>Thanks for signing up.</p>";
const STARTER_VARIABLES = [{ name: "first_name", type: "string" as const, required: false, default: "there", description: "The recipient's first name" }];

/** createTemplate: a name and a permanent slug; the content is written in the editor after. */
export function NewTemplateForm({ onCreated, onCancel }: { onCreated: (template: Template) => void; onCancel: () => void }) {
  const api = useApi();
  const [name, setName] = useState("");
  // The slug follows the name until it is edited by hand.
  const [slug, setSlug] = useState<string | null>(null);
  const create = useAction(async (params: { name: string; slug: string }) => {
    onCreated(await api.call((mr) => mr.templates.create({ ...params, subject: params.name, html: STARTER_HTML, variables: STARTER_VARIABLES })));
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
        <Field label="Name" hint="For people, e.g. “Welcome email”.">
          <input name="name" required maxLength={200} autoComplete="off" value={name} onChange={(event) => setName(event.target.value)} />
        </Field>
        <Field
          label="Slug"
          hint={
            <>
              How your code names it: <code>template: {"{ slug: \"welcome\" }"}</code>. Lowercase letters, digits and hyphens. It cannot be changed later.
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
        <ActionButton label="Create template" pendingLabel="Creating…" pending={create.pending} />
      </DialogActions>
    </form>
  );
}
