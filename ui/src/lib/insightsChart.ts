// The Insights screen's chart: requests, approvals and denials per day (Chart.js, stacked bars).
// Chart.js is loaded when the chart is first drawn, so the rest of the app does not carry it.
import type { Chart } from 'chart.js';
import type { DayCount } from './bindings/DayCount';

/** The widest a day's bar gets: with one or two days of data a bar would otherwise fill the
 * whole chart and read as a coloured wall rather than a count. */
export const MAX_BAR_PX = 48;

/** A day as the axis and its tooltip show it: "Wed 25 Nov". */
export function dayLabel(day: string): string {
  const at = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(at.getTime())) return day;
  return at.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
}

/** The chart's data: one stacked bar per day, never wider than MAX_BAR_PX. */
export function dailySeries(days: DayCount[]) {
  const bar = { maxBarThickness: MAX_BAR_PX, categoryPercentage: 0.8, barPercentage: 0.9 };
  return {
    labels: days.map((d) => dayLabel(d.day)),
    datasets: [
      { label: 'Approved', data: days.map((d) => d.approved), backgroundColor: '#2e7d32', ...bar },
      { label: 'Denied', data: days.map((d) => d.denied), backgroundColor: '#c62828', ...bar },
      { label: 'Other (waiting, expired, withdrawn)', data: days.map((d) => d.requests - d.approved - d.denied), backgroundColor: '#9e9e9e', ...bar },
    ],
  };
}

/** The days' totals in words, under the chart ("1 day: 12 requests — 9 approved, 2 denied,
 * 1 other"): one day of data is a number to read, not a shape to compare. */
export function daysSummary(days: DayCount[]): string {
  const sum = (pick: (d: DayCount) => number) => days.reduce((n, d) => n + pick(d), 0);
  const requests = sum((d) => d.requests);
  const approved = sum((d) => d.approved);
  const denied = sum((d) => d.denied);
  const span = days.length === 1 ? dayLabel(days[0].day) : `${days.length} days`;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${span}: ${plural(requests, 'request')} — ${approved} approved, ${denied} denied, ${requests - approved - denied} other`;
}

async function loadChart(): Promise<typeof Chart> {
  const chartjs = await import('chart.js');
  chartjs.Chart.register(chartjs.BarController, chartjs.BarElement, chartjs.CategoryScale, chartjs.LinearScale, chartjs.Legend, chartjs.Tooltip);
  return chartjs.Chart;
}

/** Svelte action: draws the days on a canvas, redrawn when they change. No canvas (tests), no chart. */
export function dailyChart(canvas: HTMLCanvasElement, days: DayCount[]) {
  let chart: Chart | null = null;
  let destroyed = false;
  const draw = async (next: DayCount[]) => {
    if (!canvas.getContext?.('2d')) return;
    const ChartClass = await loadChart();
    chart?.destroy();
    chart = null;
    if (destroyed) return;
    chart = new ChartClass(canvas, {
      type: 'bar',
      data: dailySeries(next),
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        // The y axis goes to at least 5, so that a day of 1 or 2 requests is a short bar rather
        // than one reaching the top.
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, suggestedMax: 5, ticks: { precision: 0 } } },
      },
    });
  };
  void draw(days);
  return {
    update: (next: DayCount[]) => void draw(next),
    destroy: () => {
      destroyed = true;
      chart?.destroy();
    },
  };
}
