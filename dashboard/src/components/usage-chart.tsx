import { useMemo } from "react";
import { calendarDay, formatCount, formatDay } from "../lib/format";
import { Table } from "./table";
import { useDayBars, type DayBars } from "./use-day-bars";

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
  const chart = useMemo<DayBars>(
    () => ({
      height: HEIGHT,
      labels: days.map((day) => formatDay(calendarDay(day.date))),
      // A label every week: 30 day names side by side would overlap.
      labelled: days.map((_, index) => index).filter((index) => (days.length - 1 - index) % 7 === 0),
      barSize: [0.7, 24],
      series: [{ label: "Live messages", color: COLOR, values: days.map((day) => day.messages) }],
    }),
    [days],
  );
  const container = useDayBars(chart);

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
