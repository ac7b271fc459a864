import { useState } from "react";
import type { Domain } from "mailroom";
import { useLocation } from "wouter";
import { useApi, useWorkspace } from "../../api/api-context";
import { useAction, useRequest } from "../../api/use-request";
import { ActionButton } from "../../components/action-button";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { ErrorState } from "../../components/error-state";
import { PageHeader } from "../../components/page-header";
import { ResourcePage } from "../../components/resource-page";
import { SummaryList, SummaryRow } from "../../components/summary-list";
import { DOMAINS_SCOPE_NOTE, isRecommended, requiredProgress } from "../../lib/domains";
import { formatDateTime } from "../../lib/format";
import { hasRole } from "../../lib/roles";
import { DkimRotationNotice, RotateDkimExplanation, RotationOutcome } from "./dkim-rotation";
import { DomainStatusBadge } from "./domain-badges";
import { RecordsTable } from "./records-table";
import { TrackingSettings } from "./tracking-settings";

function Summary({ domain }: { domain: Domain }) {
  const progress = requiredProgress(domain);
  return (
    <SummaryList>
      <SummaryRow label="Status">
        <span data-testid="domain-status">
          <DomainStatusBadge status={domain.status} />
        </span>
      </SummaryRow>
      <SummaryRow label="Required records">
        {progress.verified} of {progress.required} verified
      </SummaryRow>
      <SummaryRow label="Return-path domain">
        <code>{domain.return_path_domain}</code>
      </SummaryRow>
      <SummaryRow label="DKIM selectors">
        <ul className="plain-list">
          {domain.dkim.map((key) => (
            <li key={key.selector}>
              <code>{key.selector}</code> <span className="muted">({key.algorithm})</span>
            </li>
          ))}
        </ul>
      </SummaryRow>
      <SummaryRow label="Last checked">{formatDateTime(domain.last_checked_at, "Never")}</SummaryRow>
      {domain.failing_since && <SummaryRow label="Failing since">{formatDateTime(domain.failing_since)}</SummaryRow>}
      {domain.grace_ends_at && <SummaryRow label="Grace period ends">{formatDateTime(domain.grace_ends_at)}</SummaryRow>}
      {domain.next_check_at && (
        <SummaryRow label="Next automatic check">{formatDateTime(domain.next_check_at)}</SummaryRow>
      )}
      {/* Not "Verified": a failing domain has a verified_at too, the last check that found every record. */}
      <SummaryRow label="Last verified">{formatDateTime(domain.verified_at, "Never")}</SummaryRow>
    </SummaryList>
  );
}

/**
 * What a once-verified domain whose records went missing means for its mail, and what to do.
 * Shown whenever the page is, not only after Verify: the server's own checks take a domain out of
 * `verified` without anyone pressing anything.
 */
function HealthNotice({ domain, canManage }: { domain: Domain; canManage: boolean }) {
  const since = domain.failing_since && <> since {formatDateTime(domain.failing_since)}</>;
  const fix = (
    <>
      Republish the records marked Missing or Mismatch below, then {canManage ? "press Verify" : "ask an admin or an owner to press Verify"}.
    </>
  );
  if (domain.status === "temporary_failure") {
    return (
      <p className="notice notice--warning" role="note" data-testid="domain-health-notice">
        <strong>Required records missing{since}.</strong> Live mail from {domain.name} is still sent until its grace period ends,{" "}
        {formatDateTime(domain.grace_ends_at)}, then refused if the records are still missing.{" "}
        {domain.next_check_at && <>The server looks them up again every hour (next at {formatDateTime(domain.next_check_at)}). </>}
        {fix}
      </p>
    );
  }
  if (domain.status === "failed") {
    return (
      <p className="notice notice--danger" role="alert" data-testid="domain-health-notice">
        <strong>Live mail from {domain.name} is refused.</strong> Its required records have been missing{since}, past the grace period, and the
        server no longer looks them up by itself. {fix} Once every required record is found, the domain is verified and sends live mail again; the
        sandbox accepts mail from it meanwhile.
      </p>
    );
  }
  return null;
}

/**
 * What the verification just made of the domain, in words, after the user pressed Verify.
 * `before` is the domain until then: the same answer means different things to a domain that
 * was never verified, one that just lost a record, and one already in its grace period; and a
 * rotation waiting before it may have ended.
 */
function VerifyResult({ domain, before }: { domain: Domain; before: Domain }) {
  const progress = requiredProgress(domain);
  const left = progress.required - progress.verified;
  const notFound = (
    <>
      {left} required {left === 1 ? "record was" : "records were"} not found as expected (see each record's status below).
    </>
  );
  const propagation = "DNS changes can take a while to reach every server; verifying again is harmless.";
  const rotation = <RotationOutcome domain={domain} before={before} />;
  switch (domain.status) {
    case "verified": {
      const recovered = before.status === "temporary_failure" || before.status === "failed";
      return (
        <p className="notice notice--success" role="status" data-testid="verify-result">
          <strong>
            {domain.name} is verified{recovered && " again"}.
          </strong>{" "}
          Every required record was found:{" "}
          {before.status === "failed"
            ? "live mail may be sent from it again."
            : before.status === "temporary_failure"
              ? "it is out of its grace period and goes on sending live mail."
              : "live mail may now be sent from it."}
          {domain.records.some((record) => isRecommended(record) && record.status !== "verified") && " Publish the recommended records too."}
          {rotation}
        </p>
      );
    }
    case "pending":
      return (
        <p className="notice notice--warning" role="status" data-testid="verify-result">
          <strong>Not verified yet:</strong> {notFound} {propagation}
          {rotation}
        </p>
      );
    case "temporary_failure":
      return (
        <p className="notice notice--warning" role="status" data-testid="verify-result">
          {before.status === "temporary_failure" ? (
            <>
              <strong>Records still missing:</strong> {notFound} The grace period continues: live mail is still sent for now.
            </>
          ) : (
            <>
              <strong>No longer verified:</strong> {notFound} Live mail is still sent during a grace period.
            </>
          )}{" "}
          {propagation}
          {rotation}
        </p>
      );
    case "failed":
      return (
        <p className="notice notice--danger" role="status" data-testid="verify-result">
          {before.status === "failed" ? (
            <>
              <strong>Still failed:</strong> {notFound} Live mail from {domain.name} stays refused until they are.
            </>
          ) : (
            <>
              <strong>Grace period over:</strong> {notFound} Live mail from {domain.name} is refused from now on.
            </>
          )}{" "}
          {propagation}
          {rotation}
        </p>
      );
  }
}

function DomainView({ domain, onChange }: { domain: Domain; onChange: (domain: Domain) => void }) {
  const api = useApi();
  const { workspace } = useWorkspace();
  const [, navigate] = useLocation();
  const canManage = hasRole(workspace.role, "admin");
  const [deleting, setDeleting] = useState<Domain | null>(null);
  const [rotating, setRotating] = useState<Domain | null>(null);
  // The domain before the last Verify, once it has answered: VerifyResult words its outcome by it.
  const [verifiedFrom, setVerifiedFrom] = useState<Domain | null>(null);
  const verify = useAction(async () => {
    const before = domain;
    setVerifiedFrom(null);
    onChange(await api.call((mr) => mr.domains.verify(domain.id)));
    setVerifiedFrom(before);
  });

  return (
    <>
      <PageHeader
        title={domain.name}
        description={DOMAINS_SCOPE_NOTE}
        actions={
          canManage && (
            <>
              <ActionButton label="Verify" pendingLabel="Verifying…" pending={verify.pending} onClick={() => void verify.run()} />
              {/* The server refuses any other status (domain_not_verified): its records come first. */}
              {domain.status === "verified" && (
                <button type="button" className="button" onClick={() => setRotating(domain)}>
                  Rotate DKIM keys
                </button>
              )}
              <button type="button" className="button button--danger" onClick={() => setDeleting(domain)}>
                Delete domain
              </button>
            </>
          )
        }
      />
      {!canManage && (
        <p className="notice" role="note" data-testid="read-only-note">
          You can see this domain, its DNS records and its tracking settings. Admins and owners verify, change and delete domains, and rotate their DKIM keys.
        </p>
      )}
      {verify.pending && (
        <p className="notice notice--progress" role="status" data-testid="verify-progress">
          <span className="spinner" aria-hidden="true" />
          Looking up {domain.records.length} records in DNS…
        </p>
      )}
      {verify.error !== undefined && <ErrorState error={verify.error} title="Could not verify the domain" onRetry={() => void verify.run()} />}
      {verifiedFrom !== null && !verify.pending && <VerifyResult domain={domain} before={verifiedFrom} />}
      <HealthNotice domain={domain} canManage={canManage} />
      <DkimRotationNotice domain={domain} canManage={canManage} />
      <Summary domain={domain} />
      <Card title="DNS records" flush>
        <div className="card__padded records__intro">
          <p>
            Publish these records at your DNS provider, then press Verify. Some providers add <code>{domain.name}</code> to every name themselves:
            there, enter only the part before it. DKIM values are long; if your provider limits a TXT value to 255 characters, split it into several
            quoted strings, which receivers join again.
          </p>
          {domain.status === "pending" && domain.last_checked_at === null && (
            <p className="muted">Nothing has been checked yet. Until the domain is verified, live mail from it is refused; the sandbox accepts it.</p>
          )}
        </div>
        <RecordsTable records={domain.records} checking={verify.pending} />
      </Card>
      <TrackingSettings domain={domain} canEdit={canManage} onChange={onChange} />
      <ConfirmDialog
        target={rotating}
        title="Rotate DKIM keys?"
        confirmLabel="Rotate DKIM keys"
        onClose={() => setRotating(null)}
        onConfirm={async (target) => {
          onChange(await api.call((mr) => mr.domains.rotateDkim(target.id)));
          // The last Verify's result spoke of the records before these: it would mislead now.
          setVerifiedFrom(null);
        }}
      >
        {(target) => <RotateDkimExplanation domain={target} />}
      </ConfirmDialog>
      <ConfirmDialog
        target={deleting}
        title="Delete domain?"
        confirmLabel="Delete domain"
        onClose={() => setDeleting(null)}
        onConfirm={async (target) => {
          await api.call((mr) => mr.domains.delete(target.id));
          navigate("/domains");
        }}
      >
        {(target) => (
          <>
            <p>
              Live mail from <strong>{target.name}</strong> is refused from now on, and its DKIM keys are deleted. This cannot be undone: adding the
              domain again generates new keys and records.
            </p>
            <p>Messages already signed keep their signatures: remove the DNS records only once they are delivered.</p>
          </>
        )}
      </ConfirmDialog>
    </>
  );
}

/** `/domains/:id`: one domain's DNS records, their status, Verify, Rotate DKIM keys and Delete. */
export function DomainPage({ id }: { id: string }) {
  const api = useApi();
  const domain = useRequest((signal) => api.call((mr) => mr.domains.get(id, { signal })), [api, id]);
  return (
    <ResourcePage back={{ href: "/domains", label: "Domains" }} title="Domain" state={domain} what="this domain">
      {(data) => <DomainView key={data.id} domain={data} onChange={(next) => domain.update(() => next)} />}
    </ResourcePage>
  );
}
