import { useState } from "react";
import type { Template, TemplateVersion } from "mailroom";
import { useApi } from "../../api/api-context";
import { usePaged, useRequest } from "../../api/use-request";
import { Card } from "../../components/card";
import { ConfirmDialog } from "../../components/confirm-dialog";
import { Dialog } from "../../components/dialog";
import { EmailPreview } from "../../components/email-preview";
import { Loaded } from "../../components/loaded";
import { Pager } from "../../components/pager";
import { SummaryList, SummaryRow } from "../../components/summary-list";
import { Table } from "../../components/table";
import { formatDateTime } from "../../lib/format";
import { sampleValues } from "../../lib/templates";
import { VersionStateBadge } from "./template-badges";
import { TemplateProblems } from "./template-problems";

/** One version as it is stored (getTemplateVersion), and as it renders with its defaults. */
function VersionView({ slug, kind, version }: { slug: string; kind: Template["kind"]; version: number }) {
  const api = useApi();
  // One request for both, so the version is fetched once; a render failure (a required variable
  // without a sample) is shown beside the source rather than instead of it.
  const loaded = useRequest(
    async (signal) => {
      const source = await api.call((mr) => mr.templates.getVersion(slug, version, { signal }));
      try {
        return { source, rendered: await api.call((mr) => mr.templates.render(slug, { version, variables: sampleValues(source.variables) }, { signal })) };
      } catch (error) {
        return { source, renderError: error };
      }
    },
    [api, slug, version],
  );
  return (
    <div className="dialog__body version-view">
      <Loaded state={loaded} what={`version ${version}`} compact>
        {({ source, rendered, renderError }) => (
          <>
            <SummaryList>
              <SummaryRow label="State">
                <VersionStateBadge state={source.state} />
              </SummaryRow>
              <SummaryRow label="Made">{formatDateTime(source.created_at)}</SummaryRow>
              <SummaryRow label="Last published">{formatDateTime(source.published_at, "Never")}</SummaryRow>
              {kind === "standard" && <SummaryRow label="Layout">{source.layout ?? "None"}</SummaryRow>}
              <SummaryRow label="Variables">{source.variables.length === 0 ? "None" : source.variables.map((variable) => variable.name).join(", ")}</SummaryRow>
            </SummaryList>
            {/* A layout has no subject: the template sent in it gives one. */}
            {kind === "standard" && (
              <>
                <h3>Subject</h3>
                <pre className="version-view__source" data-testid="version-subject">
                  {source.subject}
                </pre>
              </>
            )}
            <h3>HTML</h3>
            <pre className="version-view__source" data-testid="version-html">
              {source.html}
            </pre>
            {source.text !== null && (
              <>
                <h3>Text</h3>
                <pre className="version-view__source">{source.text}</pre>
              </>
            )}
            <h3>Rendered with the defaults</h3>
            {rendered ? <EmailPreview html={rendered.html} text={rendered.text} /> : <TemplateProblems error={renderError} title="This version could not be rendered" />}
          </>
        )}
      </Loaded>
    </div>
  );
}

interface VersionHistoryProps {
  template: Template;
  canEdit: boolean;
  /**
   * Publishes an earlier version again (a rollback) on the revision the page shows, so it is
   * refused when someone else changed the template since; the page tells the outcome.
   */
  onRollBack: (version: number) => Promise<void>;
}

/** listTemplateVersions, newest first: view any version, publish an earlier one again (a rollback). */
export function VersionHistory({ template, canEdit, onRollBack }: VersionHistoryProps) {
  const api = useApi();
  const { slug, latest_version: latest, published_version: published, has_draft: hasDraft } = template;
  const versions = usePaged((after, signal) => api.call((mr) => mr.templates.listVersions(slug, { limit: 20, ...(after ? { after } : {}) }, { signal })), [api, slug]);
  const [viewing, setViewing] = useState<number | null>(null);
  const [restoring, setRestoring] = useState<TemplateVersion | null>(null);

  return (
    <Card title="Version history" flush>
      <Loaded state={versions} what="the versions">
        {(page) => (
          <Table className="table table--rows" columns={["Version", "State", "Made", "Last published"]} actions busy={versions.loading}>
            {page.data.map((version) => (
              <tr key={version.version} data-testid="version-row">
                <td className="mono">v{version.version}</td>
                <td>
                  <VersionStateBadge state={version.state} />
                </td>
                <td className="nowrap">{formatDateTime(version.created_at)}</td>
                <td className="nowrap">{formatDateTime(version.published_at, "Never")}</td>
                <td className="table__actions">
                  <button type="button" className="button button--small" aria-label={`View version ${version.version}`} onClick={() => setViewing(version.version)}>
                    View
                  </button>
                  {canEdit && version.state === "archived" && (
                    <button
                      type="button"
                      className="button button--small"
                      aria-label={`Publish version ${version.version} again`}
                      onClick={() => setRestoring(version)}
                    >
                      Publish again
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Loaded>
      <Pager paged={versions} label="Versions" />
      <Dialog open={viewing !== null} title={`Version ${viewing ?? ""}`} onClose={() => setViewing(null)} testId="version-dialog">
        {viewing !== null && <VersionView slug={slug} kind={template.kind} version={viewing} />}
        <div className="dialog__actions">
          <button type="button" className="button button--primary" onClick={() => setViewing(null)}>
            Close
          </button>
        </div>
      </Dialog>
      <ConfirmDialog
        target={restoring}
        title="Publish this version again?"
        confirmLabel={`Publish version ${restoring?.version ?? ""}`}
        onClose={() => setRestoring(null)}
        onConfirm={(version) => onRollBack(version.version)}
      >
        {(version) => (
          <>
            <p>
              Messages sent with <code>{slug}</code> use version {version.version} again from now on
              {published !== null && <>, instead of version {published}</>}.
            </p>
            {hasDraft && <p>Your draft (version {latest}) is kept: publish it when it is ready.</p>}
          </>
        )}
      </ConfirmDialog>
    </Card>
  );
}
