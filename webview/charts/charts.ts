// One chart.js chart per kind of data in a ChartsData message, coloured from the VS Code theme.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
  type ChartConfiguration,
  type Plugin,
  type Scale,
} from 'chart.js';
import { formatBytes, formatMicros, asBytes, asMicros } from '../../src/engine/index';
import type { ChartsData } from '../../src/protocol';
import { t } from '../shared/strings';
import { cssRgba, readableColor, resolveColor, themeVar } from '../shared/theme';
import {
  byteTick,
  powerOfTwoTicks,
  recommendedIndex,
  sizeSeriesDatasets,
  switchPoints,
  type SwitchPoint,
} from './series';

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
);

export interface ChartSpec {
  readonly id: string;
  readonly title: string;
  readonly verdict?: string;
  readonly config: ChartConfiguration;
}

const PALETTE_VARS = [
  '--vscode-charts-blue',
  '--vscode-charts-orange',
  '--vscode-charts-green',
  '--vscode-charts-purple',
  '--vscode-charts-red',
  '--vscode-charts-yellow',
];
const FALLBACKS = ['#3794ff', '#d18616', '#89d185', '#b180d7', '#f14c4c', '#cca700'];

export interface ThemeColours {
  readonly series: string[];
  readonly foreground: string;
  readonly grid: string;
}

export function themeColours(): ThemeColours {
  return {
    // Made readable against the editor background: Light+'s yellow and orange lines are faint on white.
    series: PALETTE_VARS.map((v, i) => cssRgba(readableColor(resolveColor(themeVar(v), FALLBACKS[i])))),
    foreground: themeVar('--vscode-foreground') || '#cccccc',
    grid: themeVar('--vscode-charts-lines') || 'rgba(128, 128, 128, 0.35)',
  };
}

/** Draws a dashed vertical line and a label where the tuner switches algorithm or protocol. */
function switchPointPlugin(
  points: readonly SwitchPoint[],
  colour: string,
): Plugin & { points: readonly SwitchPoint[] } {
  return {
    id: 'switchPoints',
    points,
    afterDatasetsDraw(chart) {
      const x = chart.scales.x;
      const { top, bottom } = chart.chartArea;
      const ctx = chart.ctx;
      ctx.save();
      ctx.strokeStyle = colour;
      ctx.fillStyle = colour;
      ctx.setLineDash([4, 3]);
      ctx.font = '11px sans-serif';
      points.forEach((point, i) => {
        const px = x.getPixelForValue(point.bytes);
        ctx.beginPath();
        ctx.moveTo(px, top);
        ctx.lineTo(px, bottom);
        ctx.stroke();
        ctx.fillText(point.label, px + 3, top + 12 + (i % 3) * 12);
      });
      ctx.restore();
    },
  };
}

/**
 * A log byte axis ticked at powers of two (a log axis would otherwise tick at 1, 2, 5 × 10^k, not sizes). Labels that
 * would run into each other on a narrow chart are skipped evenly ("16 MiB32 MiB64 MiB" at 1,400 px with three charts).
 */
const bytesAxis = (title: string) => ({
  type: 'logarithmic' as const,
  title: { display: true, text: title },
  afterBuildTicks: (axis: Scale) => {
    axis.ticks = powerOfTwoTicks(axis.min, axis.max).map((value) => ({ value }));
  },
  ticks: { callback: (v: number | string) => byteTick(Number(v)), autoSkip: true, autoSkipPadding: 8, maxRotation: 0 },
});

/** Times that differ by this factor or more are drawn on a log axis, so the fastest candidates stay readable. */
export const LOG_TIME_SPREAD = 100;

/** A time axis in µs: logarithmic where the values span LOG_TIME_SPREAD× or more, linear from zero otherwise. */
export function timeAxis(timesUs: readonly number[]) {
  const positive = timesUs.filter((timeUs) => timeUs > 0);
  const spread = positive.length > 0 ? Math.max(...positive) / Math.min(...positive) : 1;
  return spread >= LOG_TIME_SPREAD
    ? { type: 'logarithmic' as const, title: { display: true, text: t('time (µs, log)') } }
    : { type: 'linear' as const, title: { display: true, text: t('time (µs)') }, beginAtZero: true };
}

/** Every chart the data allows, in a fixed order. */
export function chartSpecs(data: ChartsData, colours: ThemeColours): ChartSpec[] {
  const c = colours.series;
  const specs: ChartSpec[] = [];
  if (data.sweeps?.length || data.measured?.length) {
    const datasets = sizeSeriesDatasets(data, 'busbwGBps', c);
    const points = data.sweeps?.[0] ? switchPoints(data.sweeps[0].rows) : [];
    specs.push({
      id: 'busbw',
      title: t('Bus bandwidth vs message size'),
      config: {
        type: 'line',
        data: { datasets },
        plugins: [switchPointPlugin(points, colours.foreground)],
        options: {
          parsing: false,
          scales: {
            x: bytesAxis(t('message size (bytes)')),
            y: { title: { display: true, text: t('busbw (GB/s)') }, beginAtZero: true },
          },
          plugins: {
            tooltip: { callbacks: { title: (items) => formatBytes(asBytes(Number(items[0]?.parsed.x ?? 0))) } },
          },
        },
      },
    });
  }
  if (data.sweeps?.length || data.measured?.length) {
    // Time per call on log-log axes: the small, latency-bound sizes that a linear busbw axis flattens to 0 GB/s
    // are read here, where they differ in µs.
    const datasets = sizeSeriesDatasets(data, 'timeUs', c);
    specs.push({
      id: 'time',
      title: t('Time per call vs message size'),
      config: {
        type: 'line',
        data: { datasets },
        options: {
          parsing: false,
          scales: {
            x: bytesAxis(t('message size (bytes)')),
            y: { type: 'logarithmic', title: { display: true, text: t('time per call (µs, log)') } },
          },
          plugins: {
            tooltip: {
              callbacks: {
                title: (items) => formatBytes(asBytes(Number(items[0]?.parsed.x ?? 0))),
                label: (item) => `${item.dataset.label}: ${formatMicros(asMicros(Number(item.parsed.y)))}`,
              },
            },
          },
        },
      },
    });
  }
  if (data.phases?.length) {
    const labels = data.phases.map((r) => r.label);
    const phase = (label: string, colour: string, key: 'exchangeUs' | 'reduceUs' | 'broadcastUs') => ({
      label,
      backgroundColor: colour,
      data: data.phases!.map((r) => r[key]),
    });
    specs.push({
      id: 'phases',
      title: t('Phase breakdown'),
      config: {
        type: 'bar',
        data: {
          labels,
          datasets: [
            phase(t('exchange'), c[0], 'exchangeUs'),
            phase(t('reduce'), c[1], 'reduceUs'),
            phase(t('broadcast'), c[2], 'broadcastUs'),
          ],
        },
        options: {
          scales: {
            x: { stacked: true, title: { display: true, text: t('collective and size') } },
            y: { stacked: true, title: { display: true, text: t('time (µs)') } },
          },
        },
      },
    });
  }
  if (data.algorithms?.length) {
    const rows = data.algorithms;
    specs.push({
      id: 'algorithms',
      title: data.comparisonBytes
        ? t('Algorithm comparison at {0}', formatBytes(data.comparisonBytes))
        : t('Algorithm comparison'),
      config: {
        type: 'bar',
        data: {
          labels: rows.map((r) => `${r.algorithm}/${r.protocol}${r.chosen ? ' ★' : ''}`),
          datasets: [
            {
              label: t('time (µs)'),
              data: rows.map((r) => r.timeUs),
              backgroundColor: rows.map((r) => (r.chosen ? c[2] : c[0])),
            },
          ],
        },
        options: {
          plugins: {
            legend: { display: false },
            tooltip: {
              callbacks: {
                label: (item) =>
                  t(
                    '{0} · {1} GB/s busbw',
                    formatMicros(rows[item.dataIndex].timeUs),
                    rows[item.dataIndex].busbwGBps.toFixed(1),
                  ),
              },
            },
          },
          scales: {
            x: { title: { display: true, text: t("algorithm/protocol (★ NCCL's choice)") } },
            y: timeAxis(rows.map((r) => r.timeUs)),
          },
        },
      },
    });
  }
  if (data.bucketSweep?.length) {
    const rows = data.bucketSweep;
    const best = recommendedIndex(rows);
    specs.push({
      id: 'buckets',
      title:
        best >= 0
          ? t(
              'Bucket-size sweep · recommended {0}, step {1}',
              formatBytes(rows[best].bucketBytes),
              formatMicros(rows[best].stepTimeUs),
            )
          : t('Bucket-size sweep'),
      verdict: data.bucketAdvice,
      config: {
        type: 'line',
        data: {
          datasets: [
            {
              label: t('step time (ms)'),
              borderColor: c[0],
              backgroundColor: c[0],
              data: rows.map((r) => ({ x: r.bucketBytes, y: r.stepTimeUs / 1e3 })),
              pointRadius: rows.map((_, i) => (i === best ? 6 : 2)),
            },
            {
              label: t('exposed communication (ms)'),
              borderColor: c[1],
              backgroundColor: c[1],
              data: rows.map((r) => ({ x: r.bucketBytes, y: r.exposedCommUs / 1e3 })),
            },
          ],
        },
        options: {
          parsing: false,
          scales: {
            x: bytesAxis(t('bucket size (bucket_cap_mb)')),
            y: { title: { display: true, text: t('time per step (ms)') }, beginAtZero: true },
          },
        },
      },
    });
  }
  if (data.nodeScaling?.length) {
    const rows = data.nodeScaling;
    specs.push({
      id: 'scaling',
      title: t('Scaling with node count'),
      config: {
        type: 'line',
        data: {
          datasets: [
            {
              label: t('busbw (GB/s)'),
              borderColor: c[0],
              backgroundColor: c[0],
              yAxisID: 'y',
              data: rows.map((r) => ({ x: r.nodes, y: r.busbwGBps })),
            },
            {
              label: t('time (µs)'),
              borderColor: c[1],
              backgroundColor: c[1],
              yAxisID: 'time',
              data: rows.map((r) => ({ x: r.nodes, y: r.timeUs })),
            },
          ],
        },
        options: {
          parsing: false,
          scales: {
            x: {
              type: 'logarithmic',
              title: { display: true, text: t('nodes') },
              ticks: { callback: (v: number | string) => (Number.isInteger(Math.log2(Number(v))) ? String(v) : '') },
            },
            y: { title: { display: true, text: t('busbw (GB/s)') }, beginAtZero: true },
            time: {
              position: 'right',
              title: { display: true, text: t('time (µs)') },
              grid: { drawOnChartArea: false },
            },
          },
        },
      },
    });
  }
  if (data.scalingCheck) {
    const { steps, series, verdict, model } = data.scalingCheck;
    const colourOf = { sum: c[4], avg: c[2], reference: c[0], other: c[3] } as const;
    specs.push({
      id: 'loss',
      title: t('Gradient scaling: loss curves of a synthetic least-squares model'),
      verdict: [verdict, model].filter(Boolean).join(' '),
      config: {
        type: 'line',
        data: {
          labels: steps.map(String),
          datasets: series.map((s) => ({
            label: s.label,
            data: [...s.loss],
            borderColor: colourOf[s.kind],
            backgroundColor: colourOf[s.kind],
            pointRadius: 0,
            borderDash: s.kind === 'reference' ? [6, 4] : undefined,
          })),
        },
        options: {
          scales: {
            x: { title: { display: true, text: t('SGD step') } },
            y: { type: 'logarithmic', title: { display: true, text: t('loss (mean squared error, log)') } },
          },
        },
      },
    });
  }
  return specs;
}
