import type { Domain } from "mailroom";
import { Link } from "wouter";
import { useApi } from "../api/api-context";
import { useRequest } from "../api/use-request";
import { formatCount, formatDateTime } from "../lib/format";

// One page per status, the API's largest: failing domains are few, and should more fail at once
// the notices say so and point to the Domains page rather than page through them on every visit.
const PER_STATUS = 100;

type FailingStatus = "temporary_failure" | "failed";
type FailingDomain = Domain & { status: FailingStatus };

function isFailing(domain: Domain): domain is FailingDomain {
  return domain.status === "temporary_failure" || domain.status === "failed";
}

/** One failing domain in a line, linking to its page, where HealthNotice explains what to do. */
function DomainNotice({ domain }: { domain: FailingDomain }) {
  const name = <Link href={`/domains/${domain.id}`}>{domain.name}</Link>;
  if (domain.status === "temporary_failure") {
    return (
      <p className="notice notice--warning" role="note" data-testid="domain-notice">
        {name} is missing DNS records since {formatDateTime(domain.failing_since)}: live mail from it stops at {formatDateTime(domain.grace_ends_at)}{" "}
        unless they are published again.
      </p>
    );
  }
  return (
    <p className="notice notice--danger" role="alert" data-testid="domain-notice">
      Live mail from {name} is refused: its DNS records have been missing since {formatDateTime(domain.failing_since)}.
    </p>
  );
}

/**
 * A line for each domain whose records went missing. The server's own checks take a domain out of
 * `verified` without anyone pressing anything, so the Overview, where people land, is where they
 * learn of it. Domains belong to the workspace: the lines show in either environment.
 *
 * listDomains is asked for each failing status, so a visit costs two requests however many
 * domains are well; the failed ones come first, as their live mail is refused already.
 *
 * listDomains is open to every member (viewer), so no role is checked here. Should the listing
 * fail anyway, nothing is shown: the notices are a pointer to the Domains pages, which report
 * their own errors, and an error box here would crowd the Overview over something secondary.
 */
export function DomainNotices() {
  const api = useApi();
  // Reloaded with `api` (a new token after the environment switch) like the Domains page, though
  // the list is the same in both environments: one rule for every page.
  const domains = useRequest(
    async (signal) => {
      const inStatus = (status: FailingStatus) => api.call((mr) => mr.domains.list({ status, limit: PER_STATUS }, { signal }));
      const pages = await Promise.all([inStatus("failed"), inStatus("temporary_failure")]);
      // isFailing only narrows the type: each page holds the status it was asked for.
      return { failing: pages.flatMap((page) => page.data.filter(isFailing)), capped: pages.some((page) => page.has_more) };
    },
    [api],
  );
  const failing = domains.data?.failing ?? [];
  return (
    // aria-busy: while the domains load, an empty box does not yet mean that every domain is well.
    <div className="domain-notices" aria-busy={domains.loading} data-testid="domain-notices">
      {failing.map((domain) => (
        <DomainNotice key={domain.id} domain={domain} />
      ))}
      {domains.data?.capped && (
        <p className="muted">
          Only the {formatCount(PER_STATUS)} newest domains of each status are shown here: <Link href="/domains">Domains</Link> lists them all.
        </p>
      )}
    </div>
  );
}
