import { useMemo } from "react";
import { formatCount, formatDay } from "../lib/format";
import type { DailyStats } from "../lib/stats";
import { Table } from "./table";
import { useDayBars, type DayBars } from "./use-day-bars";

const SERIES = [
  { id: "opens", label: "Opens", color: "#0a96d4" },
  { id: "clicks", label: "Clicks", color: "#f5a623" },
] as const;

const HEIGHT = 240;

/**
 * Opens and clicks per day, beside the status chart: opens as wide bars, clicks as narrower bars
 * drawn over them, so both show whichever is taller. Like the status chart, the numbers are also
 * in a table for screen readers.
 */
export function EngagementChart({ stats }: { stats: DailyStats }) {
  const chart = useMemo<DayBars>(
    () => ({
      height: HEIGHT,
      labels: stats.days.map((day) => formatDay(day)),
      // Narrower than the status chart: every day's label would overlap; the first, middle and
      // last place the rest (the table below names every day).
      labelled: [...new Set([0, Math.floor((stats.days.length - 1) / 2), stats.days.length - 1])],
      barSize: [0.6, 48],
      series: [
        { label: "Opens", color: SERIES[0].color, values: stats.engagement.opens },
        { label: "Clicks", color: SERIES[1].color, values: stats.engagement.clicks, barSize: [0.3, 24] },
      ],
    }),
    [stats],
  );
  const container = useDayBars(chart);

  return (
    <figure className="status-chart" data-testid="engagement-chart">
      <div ref={container} className="status-chart__canvas" aria-hidden="true" />
      <figcaption>
        <ul className="legend">
          {SERIES.map((series) => (
            <li key={series.id}>
              <span className="legend__swatch" style={{ background: series.color }} aria-hidden="true" />
              {series.label}
            </li>
          ))}
        </ul>
        <p className="muted">By people: machine opens and link scanners are left out. Counted on the day the message was sent.</p>
      </figcaption>
      <details className="status-chart__table">
        <summary>Show the numbers</summary>
        <Table caption="Opens and clicks per day" columns={["Day", ...SERIES.map((series) => series.label)]}>
          {stats.days.map((day, index) => (
            <tr key={day.toISOString()} data-testid="engagement-day">
              <th scope="row">{formatDay(day)}</th>
              {SERIES.map((series) => (
                <td key={series.id}>{formatCount(stats.engagement[series.id][index] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </Table>
      </details>
    </figure>
  );
}
