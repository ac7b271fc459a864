import { useState } from "react";
import type { Usage as UsageReport } from "mailroom";
import { Link } from "wouter";
import { useApi, useWorkspace } from "../api/api-context";
import { collectPages } from "../api/collect-pages";
import { useRequest } from "../api/use-request";
import { Card } from "../components/card";
import { ErrorState } from "../components/error-state";
import { EventTable } from "../components/event-table";
import { GettingStarted } from "../components/getting-started";
import { Loaded } from "../components/loaded";
import { PageHeader } from "../components/page-header";
import { Stat } from "../components/stat";
import { EngagementChart } from "../components/engagement-chart";
import { StatusChart } from "../components/status-chart";
import { UsageChart } from "../components/usage-chart";
import { formatCount, formatRate, formatUtcDate, startOfDay, utcDay } from "../lib/format";
import { hasRole } from "../lib/roles";
import { dailyStats } from "../lib/stats";
import { DomainNotices } from "./overview-domain-notices";

const DAYS = 7;
// The chart is computed in the browser from the message list; past this many messages in the
// period it stops paging (20 requests) and says so, rather than keep a busy workspace waiting.
const MESSAGE_CAP = 2000;
const USAGE_DAYS = 30;

function MessageStats() {
  const api = useApi();
  const [loaded, setLoaded] = useState(0);
  const stats = useRequest(
    async (signal) => {
      setLoaded(0);
      const since = startOfDay(DAYS - 1);
      const created_after = since.toISOString();
      const { items, capped } = await collectPages(
        (after) => api.call((mr) => mr.messages.list({ limit: 100, created_after, ...(after ? { after } : {}) }, { signal })),
        { cap: MESSAGE_CAP, onProgress: setLoaded },
      );
      // A week without mail is not an environment that never had any: the getting-started card is
      // only for the second, so with none in the period, ask for any one message at all.
      const sentBefore = items.length > 0 || (await api.call((mr) => mr.messages.list({ limit: 1 }, { signal }))).data.length > 0;
      return { capped, sentBefore, ...dailyStats(items, since, DAYS) };
    },
    [api],
  );

  if (stats.error !== undefined) return <ErrorState error={stats.error} title="Could not load message statistics" onRetry={stats.reload} />;
  if (!stats.data) {
    return (
      <div className="card" role="status">
        <p>
          Counting the last {DAYS} days of messages… {formatCount(loaded)} so far
        </p>
        <progress max={MESSAGE_CAP} value={loaded} aria-label="Messages counted" />
      </div>
    );
  }
  const data = stats.data;
  if (!data.sentBefore) return <GettingStarted environment={api.environment} />;
  return (
    <Card title={`Messages, last ${DAYS} days`}>
      <dl className="stats">
        <Stat label="Messages" value={formatCount(data.total)} />
        <Stat label="Delivered" value={formatCount(data.delivered)} />
        <Stat label="Delivery rate" value={formatRate(data.delivered, data.settled)} note={`of ${formatCount(data.settled)} with a final outcome`} />
        <Stat label="Bounce rate" value={formatRate(data.bounced, data.settled)} note={`${formatCount(data.bounced)} bounced`} />
        <Stat label="Opens" value={formatCount(data.opens)} note="by people, repeats included" />
        <Stat label="Clicks" value={formatCount(data.clicks)} note="on tracked links" />
      </dl>
      <div className="charts">
        <div>
          <h3 className="usage__chart-title">By status</h3>
          <StatusChart stats={data} />
        </div>
        <div>
          <h3 className="usage__chart-title">Opens and clicks</h3>
          <EngagementChart stats={data} />
        </div>
      </div>
      {data.capped && (
        <p className="notice">
          Only the {formatCount(MESSAGE_CAP)} most recent messages of the period are counted. <Link href="/messages">Browse all messages</Link>.
        </p>
      )}
    </Card>
  );
}

function RecentEvents() {
  const api = useApi();
  const events = useRequest((signal) => api.call((mr) => mr.events.list({ limit: 10 }, { signal })), [api]);
  return (
    <Card title="Recent events">
      <Loaded state={events} what="recent events" compact>
        {(page) =>
          page.data.length === 0 ? (
            <p className="muted">No events yet. Every status change of every message will show up here.</p>
          ) : (
            <EventTable events={page.data} showMessage />
          )
        }
      </Loaded>
    </Card>
  );
}

/** This month's live messages against the workspace's quota, in words and as a meter. */
function QuotaSummary({ quota }: { quota: UsageReport["quota"] }) {
  const { workspace } = useWorkspace();
  const limit = quota.monthly_messages;
  const resets = formatUtcDate(quota.resets_at);
  const settingsLink = hasRole(workspace.role, "admin") ? <Link href="/settings">Change it in Settings</Link> : "Admins change it in Settings";
  if (limit === null) {
    return (
      <div className="usage__quota">
        <p className="usage__headline" data-testid="usage-quota">
          <strong>{formatCount(quota.used)}</strong> live {quota.used === 1 ? "message" : "messages"} this month · no limit
        </p>
        <p className="muted">
          The month's count starts again on {resets} (UTC). A monthly quota caps runaway sending: {settingsLink}.
        </p>
      </div>
    );
  }
  const spent = quota.remaining === 0;
  return (
    <div className="usage__quota">
      <p className="usage__headline" data-testid="usage-quota">
        <strong>{formatCount(quota.used)}</strong> of {formatCount(limit)} live messages this month
      </p>
      <meter
        className="usage__meter"
        min={0}
        max={limit}
        low={limit * 0.8}
        high={limit * 0.95}
        optimum={0}
        value={Math.min(quota.used, limit)}
        aria-label="Monthly quota used"
      />
      <p className="muted">
        {formatCount(quota.remaining ?? 0)} left; the quota resets on {resets} (UTC). {settingsLink}.
      </p>
      {spent && (
        <p className="notice notice--warning" role="note">
          The quota is spent: live messages are refused with <code>429 monthly_quota_exceeded</code> until {resets}. The sandbox keeps working.
        </p>
      )}
    </div>
  );
}

/**
 * Live usage, whichever environment is shown: the quota counts live messages only (getUsage
 * answers the same to a sandbox token), so the card says so rather than follow the switch.
 */
function Usage() {
  const api = useApi();
  const usage = useRequest(
    (signal) => api.call((mr) => mr.usage.get({ from: utcDay(USAGE_DAYS - 1), to: utcDay(0) }, { signal })),
    [api],
  );
  return (
    <Card title="Live usage" className="usage">
      <Loaded state={usage} what="usage" compact>
        {(data) => (
          <>
            <QuotaSummary quota={data.quota} />
            <h3 className="usage__chart-title">Live messages per day, last {USAGE_DAYS} days (UTC)</h3>
            <UsageChart days={data.days} />
            <p className="muted usage__note">
              Only live messages count, on the day they are accepted (delivered, bounced or canceled alike). Sandbox messages never count.
            </p>
          </>
        )}
      </Loaded>
    </Card>
  );
}

export function OverviewPage() {
  return (
    <>
      <PageHeader title="Overview" description="How your email is doing." />
      <DomainNotices />
      <MessageStats />
      <Usage />
      <RecentEvents />
    </>
  );
}
