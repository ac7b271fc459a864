import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { calendarDay, formatCount, formatDay } from "../lib/format";
import { Table } from "./table";

const HEIGHT = 160;
const COLOR = "#635bff";

export interface UsageDayCount {
  /** The UTC day, YYYY-MM-DD. */
  date: string;
  messages: number;
}

/**
 * Live messages accepted per UTC day, as bars; drawn with uPlot like the overview's status
 * chart. The canvas says nothing to a screen reader; the table beside it carries the numbers.
 */
export function UsageChart({ days }: { days: UsageDayCount[] }) {
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const x = days.map((_, index) => index);
    const values = days.map((day) => day.messages);
    const highest = Math.max(1, ...values);
    // A label every week: 30 day names side by side would overlap.
    const labelled = x.filter((index) => (days.length - 1 - index) % 7 === 0);
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.5, days.length - 0.5] }, y: { range: [0, Math.ceil(highest * 1.1)] } },
        axes: [
          {
            splits: () => labelled,
            values: (_, splits) => splits.map((split) => (days[split] ? formatDay(calendarDay(days[split].date)) : "")),
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
          { label: "Live messages", fill: COLOR, stroke: COLOR, width: 0, paths: uPlot.paths.bars?.({ size: [0.7, 24], align: 0 }), points: { show: false } },
        ],
      },
      [x, values],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height: HEIGHT }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [days]);

  return (
    <figure className="status-chart usage-chart">
      <div ref={container} className="status-chart__canvas" aria-hidden="true" data-testid="usage-chart" />
      <details className="status-chart__table">
        <summary>Show the numbers</summary>
        <Table caption="Live messages per day (UTC)" columns={["Day (UTC)", "Live messages"]}>
          {days.map((day) => (
            <tr key={day.date}>
              <th scope="row">{formatDay(calendarDay(day.date))}</th>
              <td>{formatCount(day.messages)}</td>
            </tr>
          ))}
        </Table>
      </details>
    </figure>
  );
}
