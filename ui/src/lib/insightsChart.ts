// The Insights screen's chart: requests, approvals and denials per day (Chart.js, stacked bars).
// Chart.js is loaded when the chart is first drawn, so the rest of the app does not carry it.
import type { Chart } from 'chart.js';
import type { DayCount } from './bindings/DayCount';

/** The chart's data: one group of bars per day. */
export function dailySeries(days: DayCount[]) {
  return {
    labels: days.map((d) => d.day),
    datasets: [
      { label: 'Approved', data: days.map((d) => d.approved), backgroundColor: '#2e7d32' },
      { label: 'Denied', data: days.map((d) => d.denied), backgroundColor: '#c62828' },
      { label: 'Other (waiting, expired, withdrawn)', data: days.map((d) => d.requests - d.approved - d.denied), backgroundColor: '#9e9e9e' },
    ],
  };
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
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
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
