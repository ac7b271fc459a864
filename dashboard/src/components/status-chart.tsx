import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatCount, formatDay } from "../lib/format";
import { Table } from "./table";
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
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const running = STATUS_GROUPS.map((_, groupIndex) =>
      stats.days.map((_, day) => STATUS_GROUPS.slice(0, groupIndex + 1).reduce((sum, group) => sum + (stats.counts[group.id][day] ?? 0), 0)),
    );
    const highest = Math.max(1, ...(running.at(-1) ?? []));
    const x = stats.days.map((_, index) => index);
    const bars = uPlot.paths.bars?.({ size: [0.6, 48], align: 0 });
    const order = STATUS_GROUPS.map((group, index) => ({ group, values: running[index] ?? [] })).reverse();
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.5, stats.days.length - 0.5] }, y: { range: [0, Math.ceil(highest * 1.1)] } },
        axes: [
          {
            splits: () => x,
            values: (_, splits) => splits.map((split) => (stats.days[split] ? formatDay(stats.days[split]) : "")),
            grid: { show: false },
            stroke: "#697386",
          },
          {
            values: (_, splits) => splits.map((split) => (Number.isInteger(split) ? formatCount(split) : "")),
            stroke: "#697386",
            grid: { stroke: "#e3e8ee" },
          },
        ],
        series: [
          {},
          ...order.map(({ group }) => ({
            label: group.label,
            fill: COLORS[group.id],
            stroke: COLORS[group.id],
            width: 0,
            paths: bars,
            points: { show: false },
          })),
        ],
      },
      [x, ...order.map(({ values }) => values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [stats]);

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
