import { useState } from "react";
import { Link } from "wouter";
import { useApi } from "../api/api-context";
import { collectPages } from "../api/collect-pages";
import { useRequest } from "../api/use-request";
import { Card } from "../components/card";
import { ErrorState } from "../components/error-state";
import { EventTable } from "../components/event-table";
import { GettingStarted } from "../components/getting-started";
import { Loaded } from "../components/loaded";
import { PageHeader } from "../components/page-header";
import { StatusChart } from "../components/status-chart";
import { formatCount, formatRate, startOfDay } from "../lib/format";
import { dailyStats } from "../lib/stats";

const DAYS = 7;
// The chart is computed in the browser from the message list; past this many messages in the
// period it stops paging (20 requests) and says so, rather than keep a busy workspace waiting.
const MESSAGE_CAP = 2000;

function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>
        <span className="stat__value">{value}</span>
        {note && <span className="stat__note">{note}</span>}
      </dd>
    </div>
  );
}

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
      return { capped, ...dailyStats(items, since, DAYS) };
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
  if (data.total === 0) return <GettingStarted environment={api.environment} />;
  return (
    <Card title={`Messages, last ${DAYS} days`}>
      <dl className="stats">
        <Stat label="Messages" value={formatCount(data.total)} />
        <Stat label="Delivered" value={formatCount(data.delivered)} />
        <Stat label="Delivery rate" value={formatRate(data.delivered, data.settled)} note={`of ${formatCount(data.settled)} with a final outcome`} />
        <Stat label="Bounce rate" value={formatRate(data.bounced, data.settled)} note={`${formatCount(data.bounced)} bounced`} />
      </dl>
      <StatusChart stats={data} />
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

export function OverviewPage() {
  return (
    <>
      <PageHeader title="Overview" description="How your email is doing." />
      <MessageStats />
      <RecentEvents />
    </>
  );
}
