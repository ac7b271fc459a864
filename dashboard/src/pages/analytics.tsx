import { useMemo } from "react";
import type { MetricBucket, Metrics } from "mailroom";
import { Link, useSearchParams } from "wouter";
import { useApi } from "../api/api-context";
import { useRequest } from "../api/use-request";
import { Card } from "../components/card";
import { Field } from "../components/field";
import { Loaded } from "../components/loaded";
import { MetricsChart } from "../components/metrics-chart";
import { PageHeader } from "../components/page-header";
import { Stat } from "../components/stat";
import { Table } from "../components/table";
import { TemplateFilter, UrlFilters, useFilterTemplates, type FilterTemplates } from "../components/url-filters";
import { ANALYTICS_RANGES, DEFAULT_RANGE, analyticsFilters, bucketLabel, coveredRange, hasNoMail, metricsQuery, type Granularity } from "../lib/analytics";
import { ENVIRONMENT_LABELS, type Environment } from "../lib/environment";
import { formatCount, formatPercent } from "../lib/format";

// In the query string (`?range=24h&tag=&template=`), as on the other pages: a view can be shared.
// The default range has no value, so the page's plain address is the last 7 days.
const FILTER_NAMES = ["range", "tag", "template"] as const;

const COLUMNS = ["Accepted", "Delivered", "Deferred", "Bounced", "Opened (unique)", "Clicked (unique)", "Complained"];
const CELLS = ["accepted", "delivered", "deferred", "bounced", "unique_opened", "unique_clicked", "complained"] as const satisfies ReadonlyArray<keyof MetricBucket>;

const plural = (count: number, one: string, many: string) => `${formatCount(count)} ${count === 1 ? one : many}`;

function Filters({ params, templates }: { params: URLSearchParams; templates: FilterTemplates }) {
  return (
    <UrlFilters params={params} names={FILTER_NAMES}>
      <Field label="Range">
        <select name="range" defaultValue={params.get("range") ?? ""}>
          {ANALYTICS_RANGES.map((range) => (
            <option key={range.id} value={range.id === DEFAULT_RANGE.id ? "" : range.id}>
              {range.label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Tag">
        <input name="tag" type="text" defaultValue={params.get("tag") ?? ""} placeholder="welcome" />
      </Field>
      <TemplateFilter params={params} templates={templates} />
    </UrlFilters>
  );
}

function KeyFigures({ metrics }: { metrics: Metrics }) {
  const { totals } = metrics;
  const ended = totals.delivered + totals.bounced + totals.failed;
  return (
    <dl className="stats analytics__figures" data-testid="analytics-figures">
      <Stat label="Accepted" value={formatCount(totals.accepted)} note={plural(totals.accepted, "message", "messages")} />
      <Stat label="Delivered" value={formatCount(totals.delivered)} note={`${formatPercent(totals.delivery_rate)} delivery rate, of ${formatCount(ended)} with a final outcome`} />
      <Stat label="Bounce rate" value={formatPercent(totals.bounce_rate)} note={`${formatCount(totals.bounced)} bounced (${formatCount(totals.hard_bounced)} hard, ${formatCount(totals.soft_bounced)} soft), ${formatCount(totals.failed)} failed`} />
      <Stat label="Complaint rate" value={formatPercent(totals.complaint_rate)} note={`${plural(totals.complained, "complaint", "complaints")}, of delivered mail`} />
      <Stat
        label="Open rate"
        value={formatPercent(totals.open_rate)}
        note={`${plural(totals.unique_opened, "recipient", "recipients")} opened; ${plural(totals.machine_opened, "machine open", "machine opens")} counted apart`}
      />
      <Stat
        label="Click rate"
        value={formatPercent(totals.click_rate)}
        note={`${plural(totals.unique_clicked, "recipient", "recipients")} clicked; ${plural(totals.machine_clicked, "link scanner's click", "link scanners' clicks")} counted apart`}
      />
    </dl>
  );
}

function BucketTable({ buckets, granularity }: { buckets: MetricBucket[]; granularity: Granularity }) {
  const first = granularity === "day" ? "Day (UTC)" : "Hour (UTC)";
  return (
    <Table className="table table--rows" caption={`Figures per ${granularity}`} columns={[first, ...COLUMNS]}>
      {buckets.map((bucket) => (
        <tr key={bucket.start} data-testid="metrics-bucket-row">
          <th scope="row" className="nowrap">
            <time dateTime={bucket.start}>{bucketLabel(bucket.start, granularity)}</time>
          </th>
          {CELLS.map((cell) => (
            <td key={cell}>{formatCount(bucket[cell])}</td>
          ))}
        </tr>
      ))}
    </Table>
  );
}

/** Nothing happened: says why that may be, and how the sandbox rehearses every figure. */
function NoMail({ filtered, environment }: { filtered: boolean; environment: Environment }) {
  return (
    <section className="card" aria-label="Analytics">
      <div className="empty empty--teach" data-testid="analytics-empty">
        <p>
          <strong>No mail in this range.</strong>
        </p>
        {filtered && <p>No message with this tag or template had anything happen in it: clear the filters or choose a longer range.</p>}
        <p>
          Sandbox keys rehearse every outcome without sending anything: send sandbox mail to <code>delivered@simulator.test</code>,{" "}
          <code>bounced@simulator.test</code>, <code>opened@simulator.test</code> or <code>complained@simulator.test</code>
          {environment === "sandbox" ? " and its figures show here." : ", then switch to the sandbox to see its figures here."}{" "}
          <Link href="/inbox">The sandbox inbox</Link> shows what was sent.
        </p>
      </div>
    </section>
  );
}

/**
 * `/analytics`: the environment's mail per UTC hour or day (getMetrics): key figures, a chart and
 * a table per bucket, filtered by range, tag and template (listTemplates fills the select).
 */
export function AnalyticsPage() {
  const api = useApi();
  const [params] = useSearchParams();
  const filters = useMemo(() => analyticsFilters(params), [params]);
  const filtered = filters.tag !== undefined || filters.template !== undefined;
  // The range ends with the bucket under way at the time of asking (a Retry asks again for now).
  const metrics = useRequest((signal) => api.call((mr) => mr.metrics.get(metricsQuery(filters), { signal })), [api, filters]);
  const templates = useFilterTemplates();
  const environment = ENVIRONMENT_LABELS[api.environment].toLowerCase();

  return (
    <>
      <PageHeader
        title="Analytics"
        description={`What happened to the ${environment} environment's mail, counted from its events per UTC hour or day. An event counts when it happens: a message accepted on Monday and opened on Tuesday is opened on Tuesday.`}
      />
      <Filters params={params} templates={templates} />
      <Loaded state={metrics} what="metrics">
        {(data) => {
          if (hasNoMail(data.totals)) return <NoMail filtered={filtered} environment={api.environment} />;
          const range = coveredRange(data);
          const per = data.granularity === "day" ? "day" : "hour";
          return (
            <>
              <Card title={filters.range.label}>
                <p className="muted" data-testid="analytics-range">
                  {range} (UTC)
                  {data.tag !== null && ` · tag ${data.tag}`}
                  {data.template !== null && ` · template ${data.template}`}
                </p>
                <KeyFigures metrics={data} />
                <p className="muted usage__note">
                  Delivery and bounce rates are of the recipients whose hand-off ended (delivered, bounced or failed); complaint, open and click rates of
                  those delivered. Opens and clicks are by people: image proxies and link scanners are counted apart.
                </p>
              </Card>
              <Card title={`Per ${per}`}>
                <MetricsChart buckets={data.buckets} granularity={data.granularity} range={range} />
              </Card>
              <Card title={`Figures per ${per}`} flush>
                <BucketTable buckets={data.buckets} granularity={data.granularity} />
              </Card>
            </>
          );
        }}
      </Loaded>
    </>
  );
}
