import { useMemo } from "react";
import { formatCount, formatDay } from "../lib/format";
import { Table } from "./table";
import { useDayBars, type DayBars } from "./use-day-bars";
import { STATUS_GROUPS, type DailyStats, type StatusGroupId } from "../lib/stats";

const COLORS: Record<StatusGroupId, string> = {
  delivered: "#1ea672",
  in_progress: "#635bff",
  bounced: "#e5813b",
  failed: "#df1b41",
  stopped: "#a3acb9",
};

const HEIGHT = 240;

/**
 * Messages per day, stacked by status group. uPlot has no stacking of its own: each series is
 * drawn as the running total up to its group, tallest first, so the shorter bars painted over it
 * leave each group's band visible. The canvas says nothing to a screen reader; the table beside
 * it carries the same numbers.
 */
export function StatusChart({ stats }: { stats: DailyStats }) {
  const chart = useMemo<DayBars>(() => {
    const running = STATUS_GROUPS.map((_, groupIndex) =>
      stats.days.map((_, day) => STATUS_GROUPS.slice(0, groupIndex + 1).reduce((sum, group) => sum + (stats.counts[group.id][day] ?? 0), 0)),
    );
    return {
      height: HEIGHT,
      labels: stats.days.map((day) => formatDay(day)),
      barSize: [0.6, 48],
      series: STATUS_GROUPS.map((group, index) => ({ label: group.label, color: COLORS[group.id], values: running[index] ?? [] })).reverse(),
    };
  }, [stats]);
  const container = useDayBars(chart);

  return (
    <figure className="status-chart">
      <div ref={container} className="status-chart__canvas" aria-hidden="true" />
      <figcaption>
        <ul className="legend">
          {STATUS_GROUPS.map((group) => (
            <li key={group.id}>
              <span className="legend__swatch" style={{ background: COLORS[group.id] }} aria-hidden="true" />
              {group.label}
            </li>
          ))}
        </ul>
      </figcaption>
      <details className="status-chart__table">
        <summary>Show the numbers</summary>
        <Table caption="Messages per day by status" columns={["Day", ...STATUS_GROUPS.map((group) => group.label)]}>
          {stats.days.map((day, index) => (
            <tr key={day.toISOString()}>
              <th scope="row">{formatDay(day)}</th>
              {STATUS_GROUPS.map((group) => (
                <td key={group.id}>{formatCount(stats.counts[group.id][index] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </Table>
      </details>
    </figure>
  );
}
