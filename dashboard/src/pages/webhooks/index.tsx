import { useState } from "react";
import type { Webhook } from "mailroom";
import { Link } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
import { usePaged } from "../../api/use-request";
import { Dialog } from "../../components/dialog";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { ENVIRONMENT_LABELS } from "../../lib/environment";
import { formatDate } from "../../lib/format";
import { hasRole } from "../../lib/roles";
import { disabledByMailroom, eventTypesLabel } from "../../lib/webhooks";
import { AddWebhookForm } from "./add-webhook-form";
import { DisabledNotice } from "./disabled-notice";
import { WebhookSecretDialog } from "./webhook-secret-dialog";
import { WebhookStatusBadge } from "./webhook-badges";

function WebhookTable({ webhooks }: { webhooks: Webhook[] }) {
  return (
    <Table className="table table--rows" columns={["Endpoint", "Events", "Status", "Added"]}>
      {webhooks.map((webhook) => (
        <tr key={webhook.id} data-testid="webhook-row">
          <td className="webhooks__endpoint">
            <Link href={`/webhooks/${webhook.id}`} className="mono break">
              {webhook.url}
            </Link>
            {webhook.description && <p className="muted">{webhook.description}</p>}
          </td>
          <td>{eventTypesLabel(webhook)}</td>
          <td className="nowrap">
            <WebhookStatusBadge webhook={webhook} />
            {webhook.status === "enabled" && webhook.failing_since && (
              <p className="webhooks__failing" data-testid="webhook-failing">
                Failing since {formatDate(webhook.failing_since)}
              </p>
            )}
          </td>
          <td className="nowrap">{formatDate(webhook.created_at)}</td>
        </tr>
      ))}
    </Table>
  );
}

/** The empty list teaches what an endpoint receives and how to check its deliveries. */
function NoWebhooks({ environment, canManage, onAdd }: { environment: string; canManage: boolean; onAdd: () => void }) {
  return (
    <div className="empty empty--teach">
      <p>
        <strong>No webhook endpoints in {environment}.</strong>
      </p>
      <p>
        Add a URL of your application and Mailroom POSTs every event there as it happens (delivered, bounced, opened…), signed with the endpoint's
        secret, retried for three days when it fails. The sandbox sends the same events for its simulated outcomes, so you can rehearse here.
      </p>
      {canManage ? (
        <button type="button" className="button button--primary" onClick={onAdd}>
          Add your first endpoint
        </button>
      ) : (
        <p>Ask a developer, an admin or an owner of the workspace to add one.</p>
      )}
    </div>
  );
}

/** `/webhooks`: the environment's webhook endpoints, with a notice for each one Mailroom disabled. */
export function WebhooksPage() {
  const api = useApi();
  const { workspace } = useWorkspace();
  const canManage = hasRole(workspace.role, "developer");
  const webhooks = usePaged((after, signal) => api.call((mr) => mr.webhooks.list({ limit: 50, ...(after ? { after } : {}) }, { signal })), [api]);
  const [adding, setAdding] = useState(false);
  const [added, setAdded] = useState<Webhook | null>(null);
  const environment = ENVIRONMENT_LABELS[api.environment].toLowerCase();
  const disabled = webhooks.data?.data.filter(disabledByMailroom) ?? [];

  return (
    <>
      <PageHeader
        title="Webhooks"
        description={`Endpoints that receive the ${environment} environment's events. Each environment has its own: switch to see the other's.`}
        actions={
          canManage && (
            <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
              Add endpoint
            </button>
          )
        }
      />
      {!canManage && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see the endpoints and their delivery attempts. Developers, admins and owners add, change and test them.
        </p>
      )}
      {disabled.map((webhook) => (
        <DisabledNotice key={webhook.id} webhook={webhook} canManage={canManage} onEnabled={() => webhooks.reload()} linked />
      ))}
      <section className="card card--flush" aria-label="Webhook endpoints">
        <Loaded state={webhooks} what="webhook endpoints">
          {(page) =>
            page.data.length === 0 && webhooks.pageNumber === 1 ? (
              <NoWebhooks environment={environment} canManage={canManage} onAdd={() => setAdding(true)} />
            ) : (
              <WebhookTable webhooks={page.data} />
            )
          }
        </Loaded>
      </section>
      <Pager paged={webhooks} label="Webhook endpoints" />
      <Dialog open={adding} title="Add endpoint" onClose={() => setAdding(false)}>
        <AddWebhookForm
          onCancel={() => setAdding(false)}
          onAdded={(webhook) => {
            setAdding(false);
            setAdded(webhook);
            webhooks.reload();
          }}
        />
      </Dialog>
      <WebhookSecretDialog webhook={added} onClose={() => setAdded(null)} />
    </>
  );
}
