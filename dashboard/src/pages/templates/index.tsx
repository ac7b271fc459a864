import { useState } from "react";
import type { Template } from "mailroom";
import { Link, useLocation } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
import { usePaged } from "../../api/use-request";
import { Dialog } from "../../components/dialog";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { formatDateTime } from "../../lib/format";
import { hasRole } from "../../lib/roles";
import { TEMPLATES_SCOPE_NOTE } from "../../lib/templates";
import { NewTemplateForm } from "./new-template-form";
import { LayoutBadge, PublishedBadge } from "./template-badges";

function TemplateTable({ templates }: { templates: Template[] }) {
  return (
    <Table className="table table--rows" columns={["Template", "Slug", "Published", "Updated"]}>
      {templates.map((template) => (
        <tr key={template.id} data-testid="template-row">
          <td>
            <Link href={`/templates/${template.slug}`}>{template.name}</Link> <LayoutBadge template={template} />
          </td>
          <td className="mono">{template.slug}</td>
          <td className="nowrap">
            <PublishedBadge template={template} />
          </td>
          <td className="nowrap">
            <time dateTime={template.updated_at}>{formatDateTime(template.updated_at)}</time>
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** The empty list teaches what a template is for and how code sends one. */
function NoTemplates({ canEdit, onAdd }: { canEdit: boolean; onAdd: () => void }) {
  return (
    <div className="empty empty--teach">
      <p>
        <strong>No templates yet.</strong>
      </p>
      <p>
        Write a message once in Liquid, with the variables it expects, and send it by its slug: <code>{'template: { slug: "welcome", variables }'}</code>.
        Edits stay a draft until you publish them, and every published version can be restored.
      </p>
      {canEdit ? (
        <button type="button" className="button button--primary" onClick={onAdd}>
          Create your first template
        </button>
      ) : (
        <p>Ask a developer, an admin or an owner of the workspace to create one.</p>
      )}
    </div>
  );
}

/** `/templates`: the workspace's templates; developers and above create them. */
export function TemplatesPage() {
  const api = useApi();
  const { workspace } = useWorkspace();
  const [, navigate] = useLocation();
  const canEdit = hasRole(workspace.role, "developer");
  const templates = usePaged((after, signal) => api.call((mr) => mr.templates.list({ limit: 50, ...(after ? { after } : {}) }, { signal })), [api]);
  const [adding, setAdding] = useState(false);

  return (
    <>
      <PageHeader
        title="Templates"
        description={TEMPLATES_SCOPE_NOTE}
        actions={
          canEdit && (
            <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
              New template
            </button>
          )
        }
      />
      {!canEdit && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see the templates, their versions and previews. Developers, admins and owners create, edit and publish them.
        </p>
      )}
      <section className="card card--flush" aria-label="Templates">
        <Loaded state={templates} what="templates">
          {(page) =>
            page.data.length === 0 && templates.pageNumber === 1 ? (
              <NoTemplates canEdit={canEdit} onAdd={() => setAdding(true)} />
            ) : (
              <TemplateTable templates={page.data} />
            )
          }
        </Loaded>
      </section>
      <Pager paged={templates} label="Templates" />
      <Dialog open={adding} title="New template" onClose={() => setAdding(false)}>
        <NewTemplateForm
          onCancel={() => setAdding(false)}
          onCreated={(template) => {
            setAdding(false);
            navigate(`/templates/${template.slug}`);
          }}
        />
      </Dialog>
    </>
  );
}
