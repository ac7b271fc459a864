import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatCount } from "../lib/format";

export interface DayBars {
  height: number;
  /** Each day's label on the x axis, in order. */
  labels: string[];
  /** The indexes of the days whose label is shown (default: every day's). */
  labelled?: number[];
  /** uPlot's bar size: the share of a day's slot a bar takes, and its widest in pixels. */
  barSize: [number, number];
  /**
   * One value a day each, drawn in this order: a series paints over the ones before it. A
   * series' own `barSize` (narrower) leaves the wider bars under it visible at any height.
   */
  series: Array<{ label: string; color: string; values: number[]; barSize?: [number, number] }>;
}

/**
 * Bars per day, drawn with uPlot in the element the returned ref is put on: drawn again when
 * `chart` changes (memoise it), resized with the element, destroyed on unmount. The canvas says
 * nothing to a screen reader: whoever draws it also shows the numbers as a table.
 */
export function useDayBars(chart: DayBars) {
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const { height, labels, labelled, series } = chart;
    const x = labels.map((_, index) => index);
    const highest = Math.max(1, ...series.flatMap(({ values }) => values));
    const bars = uPlot.paths.bars?.({ size: chart.barSize, align: 0 });
    const plot = new uPlot(
      {
        width: element.clientWidth,
        height,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: [0, Math.ceil(highest * 1.1)] } },
        axes: [
          {
            splits: () => labelled ?? x,
            values: (_, splits) => splits.map((split) => labels[split] ?? ""),
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
          ...series.map(({ label, color, barSize }) => ({
            label,
            fill: color,
            stroke: color,
            width: 0,
            paths: barSize ? uPlot.paths.bars?.({ size: barSize, align: 0 }) : bars,
            points: { show: false },
          })),
        ],
      },
      [x, ...series.map(({ values }) => values)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: element.clientWidth, height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [chart]);

  return container;
}
