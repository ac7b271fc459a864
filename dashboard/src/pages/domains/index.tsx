import { useState } from "react";
import type { Domain } from "mailroom";
import { Link, useLocation, useSearchParams } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
import { usePaged } from "../../api/use-request";
import { Dialog } from "../../components/dialog";
import { Loaded } from "../../components/loaded";
import { PageHeader } from "../../components/page-header";
import { Pager } from "../../components/pager";
import { Table } from "../../components/table";
import { FilterSelect, UrlFilters } from "../../components/url-filters";
import { DOMAIN_STATUS_LABELS, DOMAINS_SCOPE_NOTE, isDomainStatus, requiredProgress } from "../../lib/domains";
import { formatDate, formatDateTime } from "../../lib/format";
import { hasRole } from "../../lib/roles";
import { AddDomainForm } from "./add-domain-form";
import { DomainStatusBadge } from "./domain-badges";

// The filter lives in the query string (`?status=`), as on the message log: bookmarkable.
const FILTER_NAMES = ["status"] as const;

function FilterForm({ params }: { params: URLSearchParams }) {
  return (
    <UrlFilters params={params} names={FILTER_NAMES}>
      <FilterSelect name="status" label="Status" anyLabel="All statuses" options={Object.entries(DOMAIN_STATUS_LABELS).map(([value, label]) => ({ value, label }))} params={params} />
    </UrlFilters>
  );
}

function DomainTable({ domains }: { domains: Domain[] }) {
  return (
    <Table className="table table--rows" columns={["Domain", "Status", "Required records", "Added", "Last checked"]}>
      {domains.map((domain) => {
        const progress = requiredProgress(domain);
        return (
          <tr key={domain.id} data-testid="domain-row">
            <td>
              <Link href={`/domains/${domain.id}`}>{domain.name}</Link>
            </td>
            <td>
              <DomainStatusBadge status={domain.status} />
            </td>
            <td className="nowrap">
              {progress.verified} of {progress.required} verified
            </td>
            <td className="nowrap">{formatDate(domain.created_at)}</td>
            <td className="nowrap">{formatDateTime(domain.last_checked_at, "Never")}</td>
          </tr>
        );
      })}
    </Table>
  );
}

/** The empty list teaches what a domain is for and what adding one does. */
function NoDomains({ canManage, onAdd }: { canManage: boolean; onAdd: () => void }) {
  return (
    <div className="empty empty--teach">
      <p>
        <strong>No sending domains yet.</strong>
      </p>
      <p>
        Add the domain your mail comes from (<code>acme.example</code> for <code>hello@acme.example</code>). Mailroom generates its DKIM keys and
        lists the DNS records to publish; once they are found, the domain is verified. Live mail may only be sent from a verified domain; the sandbox
        accepts any sender.
      </p>
      {canManage ? (
        <button type="button" className="button button--primary" onClick={onAdd}>
          Add your first domain
        </button>
      ) : (
        <p>Ask an admin or an owner of the workspace to add one.</p>
      )}
    </div>
  );
}

/** `/domains`: the workspace's sending domains; admins and owners add them. */
export function DomainsPage() {
  const api = useApi();
  const { workspace } = useWorkspace();
  const [, navigate] = useLocation();
  const [params] = useSearchParams();
  const given = params.get("status");
  const status = isDomainStatus(given) ? given : undefined;
  const canManage = hasRole(workspace.role, "admin");
  // Domains are workspace-wide, so the list does not change with the environment switch; it is
  // still reloaded with `api` (a new token), which is cheap and keeps one rule for every page.
  const domains = usePaged(
    (after, signal) => api.call((mr) => mr.domains.list({ limit: 50, ...(status ? { status } : {}), ...(after ? { after } : {}) }, { signal })),
    [api, status],
  );
  const [adding, setAdding] = useState(false);

  return (
    <>
      <PageHeader
        title="Domains"
        description={DOMAINS_SCOPE_NOTE}
        actions={
          canManage && (
            <button type="button" className="button button--primary" onClick={() => setAdding(true)}>
              Add domain
            </button>
          )
        }
      />
      {!canManage && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see the domains and their DNS records. Admins and owners add, verify and delete them.
        </p>
      )}
      <FilterForm params={params} />
      <section className="card card--flush" aria-label="Domains">
        <Loaded state={domains} what="domains">
          {(page) =>
            page.data.length === 0 && domains.pageNumber === 1 ? (
              status ? (
                <p className="empty">No domains match this filter.</p>
              ) : (
                <NoDomains canManage={canManage} onAdd={() => setAdding(true)} />
              )
            ) : (
              <DomainTable domains={page.data} />
            )
          }
        </Loaded>
      </section>
      <Pager paged={domains} label="Domains" />
      <Dialog open={adding} title="Add domain" onClose={() => setAdding(false)}>
        <AddDomainForm
          onCancel={() => setAdding(false)}
          onAdded={(domain) => {
            setAdding(false);
            navigate(`/domains/${domain.id}`);
          }}
        />
      </Dialog>
    </>
  );
}
