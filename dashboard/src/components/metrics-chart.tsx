import type { MetricBucket } from "mailroom";
import { bucketLabel, bucketTick, countTicks, labelledBuckets, type Granularity } from "../lib/analytics";
import { formatCount } from "../lib/format";

/** What the chart draws per bucket, side by side, in this order. */
export const METRIC_SERIES = [
  { id: "delivered", label: "Delivered", color: "#1ea672" },
  { id: "bounced", label: "Bounced", color: "#e5813b" },
  { id: "unique_opened", label: "Opened (unique)", color: "#0a96d4" },
] as const satisfies ReadonlyArray<{ id: keyof MetricBucket; label: string; color: string }>;

// The drawing's own units: the SVG scales to its container's width, keeping these proportions.
const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 40;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 24;
const PLOT_WIDTH = WIDTH - LEFT - RIGHT;
const PLOT_HEIGHT = HEIGHT - TOP - BOTTOM;

/**
 * Delivered, bounced and unique opens per bucket, as grouped bars in plain SVG (no canvas: the
 * figures are in the document). The image is named as a whole for screen readers; each bucket's
 * group has a `<title>` with its figures, which browsers show as a tooltip; the table under the
 * chart carries every number too.
 */
export function MetricsChart({ buckets, granularity, range }: { buckets: MetricBucket[]; granularity: Granularity; range: string }) {
  const ticks = countTicks(Math.max(0, ...buckets.flatMap((bucket) => METRIC_SERIES.map((series) => bucket[series.id]))));
  const top = ticks.at(-1) ?? 1;
  const y = (value: number) => TOP + PLOT_HEIGHT - (value / top) * PLOT_HEIGHT;
  const slot = PLOT_WIDTH / Math.max(1, buckets.length);
  // The group takes most of its slot, with a gap between buckets; each bar a third of the group.
  const barWidth = (slot * 0.8) / METRIC_SERIES.length;
  const labelled = new Set(labelledBuckets(buckets.length));
  const per = granularity === "day" ? "day" : "hour";

  return (
    <figure className="metrics-chart" data-testid="metrics-chart">
      <svg
        className="metrics-chart__svg"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`Delivered, bounced and opened (unique) per ${per}, ${range} (UTC). The table below has every figure.`}
      >
        {ticks.map((tick) => (
          <g key={tick} className="metrics-chart__tick">
            <line x1={LEFT} x2={WIDTH - RIGHT} y1={y(tick)} y2={y(tick)} />
            <text x={LEFT - 6} y={y(tick)} dy="0.32em" textAnchor="end">
              {formatCount(tick)}
            </text>
          </g>
        ))}
        {buckets.map((bucket, index) => {
          const x = LEFT + index * slot + slot * 0.1;
          const figures = METRIC_SERIES.map((series) => `${formatCount(bucket[series.id])} ${series.label.toLowerCase()}`).join(", ");
          return (
            <g key={bucket.start} data-testid="metrics-chart-bucket">
              <title>{`${bucketLabel(bucket.start, granularity)} (UTC): ${figures}`}</title>
              {/* Invisible, the bucket's whole height: its tooltip shows over an empty bucket too. */}
              <rect x={LEFT + index * slot} y={TOP} width={slot} height={PLOT_HEIGHT} fill="transparent" />
              {METRIC_SERIES.map((series, position) => (
                <rect
                  key={series.id}
                  x={x + position * barWidth}
                  y={y(bucket[series.id])}
                  width={Math.max(0.5, barWidth - 0.5)}
                  height={TOP + PLOT_HEIGHT - y(bucket[series.id])}
                  fill={series.color}
                />
              ))}
              {labelled.has(index) && (
                <text className="metrics-chart__label" x={LEFT + (index + 0.5) * slot} y={HEIGHT - 6} textAnchor="middle">
                  {bucketTick(bucket.start, granularity)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend">
          {METRIC_SERIES.map((series) => (
            <li key={series.id}>
              <span className="legend__swatch" style={{ background: series.color }} aria-hidden="true" />
              {series.label}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
