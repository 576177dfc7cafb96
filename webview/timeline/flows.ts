// Flow arrows, as Perfetto draws them: from the end of one span to the start of the span it hands work to. The
// trace's own flows (a gradient bucket to its collective, a CPU launch to its kernel) come with it; the ring steps
// of a simulated collective are linked here, each rank's transfer to the one its peer sends next with the data.
import type { Flow, Span } from '../../src/engine/index';
import { t } from '../shared/strings';
import type { TimelineModel } from './model';
import type { TimeScale } from './time-scale';

/** Arrows drawn in one frame at most; past that the view is too dense to read them, and frames must stay fast. */
export const MAX_DRAWN_FLOWS = 2000;

/**
 * Flows from each transfer of a simulated collective (a span with args.peer at ring step s on a channel) to its
 * peer's transfer at step s + 1 on the same channel, the same chunk where the peer has one: what rank r sent is
 * what its peer reduces and sends on. Steps are per channel, so a step with no successor (the last) has none.
 */
export function peerFlows(spans: readonly Span[]): Flow[] {
  const byKey = new Map<string, number[]>();
  const key = (rank: number, channel: number, step: number): string => `${rank}:${channel}:${step}`;
  spans.forEach((span, i) => {
    if (span.step < 0 || typeof span.args?.peer !== 'number') return;
    const k = key(span.rank, span.channel, span.step);
    const list = byKey.get(k);
    if (list) list.push(i);
    else byKey.set(k, [i]);
  });
  if (byKey.size === 0) return [];
  const flows: Flow[] = [];
  spans.forEach((span, i) => {
    const peer = span.args?.peer;
    if (span.step < 0 || typeof peer !== 'number' || peer === span.rank) return;
    const next = byKey.get(key(peer, span.channel, span.step + 1));
    if (!next) return;
    const target = next.find((j) => spans[j].chunk === span.chunk) ?? next[0];
    flows.push({ fromSpan: i, toSpan: target, name: t('step {0} → rank {1}', span.step, peer) });
  });
  return flows;
}

/** Flows with their ends as the model's sorted positions, ready to draw. */
export interface FlowSet {
  readonly from: Uint32Array;
  readonly to: Uint32Array;
  readonly names: readonly (string | undefined)[];
}

/** The trace's flows and the derived peer flows, mapped to sorted positions; flows naming unknown spans are dropped. */
export function flowSet(model: TimelineModel, flows: readonly Flow[]): FlowSet {
  const n = model.spanCount;
  const sortedOf = new Uint32Array(n);
  for (let k = 0; k < n; k++) sortedOf[model.originalIndex(k)] = k;
  const valid = flows.filter(
    (f) => Number.isInteger(f.fromSpan) && Number.isInteger(f.toSpan) && f.fromSpan < n && f.toSpan < n,
  );
  return {
    from: Uint32Array.from(valid, (f) => sortedOf[f.fromSpan]),
    to: Uint32Array.from(valid, (f) => sortedOf[f.toSpan]),
    names: valid.map((f) => f.name),
  };
}

/** The flows into and out of a span (sorted position), for its details. */
export function flowsOf(set: FlowSet, sorted: number): { incoming: number[]; outgoing: number[] } {
  const incoming: number[] = [];
  const outgoing: number[] = [];
  for (let i = 0; i < set.from.length; i++) {
    if (set.to[i] === sorted) incoming.push(set.from[i]);
    if (set.from[i] === sorted) outgoing.push(set.to[i]);
  }
  return { incoming, outgoing };
}

export interface FlowCanvas {
  readonly ctx: CanvasRenderingContext2D;
  readonly dpr: number;
  readonly rowHeightPx: number;
  /** Canvas y of the top of the line showing a model row, or undefined when it is not laid out. */
  rowTopPx(row: number): number | undefined;
}

/**
 * Draws the flows whose arrows cross the visible time window: a curve from the source span's end to the target's
 * start with an arrowhead; those touching the selected span thicker, in the focus colour. Returns how many it drew.
 */
export function drawFlows(
  target: FlowCanvas,
  model: TimelineModel,
  set: FlowSet,
  scale: TimeScale,
  selected: number,
  colours: { normal: string; selected: string },
): number {
  const { ctx, dpr } = target;
  const left = scale.leftPx;
  const right = scale.leftPx + scale.widthPx;
  const half = target.rowHeightPx / 2;
  let drawn = 0;
  const draw = (i: number, emphasised: boolean): void => {
    const from = set.from[i];
    const to = set.to[i];
    const x0 = scale.timeToPx(model.end[from]);
    const x1 = scale.timeToPx(model.start[to]);
    if ((x0 < left && x1 < left) || (x0 > right && x1 > right)) return;
    const top0 = target.rowTopPx(model.rowOf(from));
    const top1 = target.rowTopPx(model.rowOf(to));
    if (top0 === undefined || top1 === undefined) return;
    const y0 = top0 + half;
    const y1 = top1 + half;
    ctx.strokeStyle = ctx.fillStyle = emphasised ? colours.selected : colours.normal;
    ctx.lineWidth = (emphasised ? 2 : 1) * dpr;
    // A horizontal tangent at both ends, as Perfetto draws them, so an arrow between neighbouring rows stays legible.
    const bend = Math.max(12 * dpr, Math.abs(x1 - x0) / 2);
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.bezierCurveTo(x0 + bend, y0, x1 - bend, y1, x1, y1);
    ctx.stroke();
    const head = 5 * dpr;
    ctx.beginPath();
    ctx.moveTo(x1, y1);
    ctx.lineTo(x1 - head, y1 - head / 2);
    ctx.lineTo(x1 - head, y1 + head / 2);
    ctx.closePath();
    ctx.fill();
    drawn++;
  };
  // The selected span's flows first, so they are drawn however dense the rest is.
  const touching: number[] = [];
  for (let i = 0; i < set.from.length && selected >= 0; i++)
    if (set.from[i] === selected || set.to[i] === selected) touching.push(i);
  for (let i = 0; i < set.from.length && drawn < MAX_DRAWN_FLOWS; i++) {
    if (selected >= 0 && (set.from[i] === selected || set.to[i] === selected)) continue;
    draw(i, false);
  }
  for (const i of touching) draw(i, true);
  return drawn;
}
