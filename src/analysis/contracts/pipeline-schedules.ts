// The contract of torch.distributed.pipelining's schedules (`ScheduleGPipe`, `Schedule1F1B`,
// `ScheduleInterleaved1F1B`, `ScheduleZBVZeroBubble`, … and the `PipelineScheduleSingle`/`Multi` bases): from
// torch 2.5 their constructor takes `scale_grads=True`, and with it every `schedule.step()` ends by dividing every
// `.grad` of the stage's parameters by `n_microbatches` (`stage.scale_grads(n_microbatches)`), the gradients that
// were already there included. That is the mean over the step's micro-batches when the gradients start at zero;
// when several `step()` calls accumulate into the same gradients before one optimizer step, the gradients of the
// earlier steps are divided again at every later one (torchtitan #1732: the fix passes `scale_grads=False` and
// divides the loss by `n_microbatches` instead). CP002 is reported at the schedule's construction only where the
// workspace proves all of it: the schedule keeps `scale_grads` on, a name it is assigned to (by data flow, or by a
// return annotation `tuple[_PipelineSchedule, …]` when every schedule that leaves its function scales) has
// `.step()` called on it inside a `for … in range(k)` loop, directly or through one method, that neither clears
// the gradients nor steps an optimizer, and an optimizer steps after that loop in the same function.
import type { Finding, RelatedLocation } from '../types';
import { ruleInfo } from '../rules';
import type { AccumulationLoop, Construction, PipelineFacts, Position, StepCall } from './pipeline-fact-types';

interface Workspace {
  readonly files: ReadonlyMap<string, PipelineFacts>;
  /** Every construction outside test code, and those whose function returns them. */
  readonly constructions: readonly Located<Construction>[];
  readonly escaping: readonly Located<Construction>[];
  /** Functions that return a schedule, and annotated callables that do, with the tuple position. */
  readonly returning: ReadonlyMap<string, Position>;
  readonly callables: ReadonlyMap<string, Position>;
}

interface Located<T> {
  readonly path: string;
  readonly item: T;
}

/** CP002 findings for the schedules whose gradient scaling repeats within one accumulation window, by file. */
export function pipelineScheduleFindings(
  files: ReadonlyMap<string, PipelineFacts>,
  isTest: (path: string) => boolean,
): Map<string, Finding[]> {
  const out = new Map<string, Finding[]>();
  const constructions = [...files].flatMap(([path, f]) =>
    isTest(path) ? [] : f.constructions.map((item) => ({ path, item })),
  );
  if (constructions.length === 0) return out;
  const returning = returningFunctions(files);
  const escaping = constructions.filter((c) => c.item.variable && escapes(files.get(c.path)!, c.item));
  const callables = new Map<string, Position>();
  for (const f of files.values()) for (const [name, p] of f.annotatedCallables) callables.set(name, p);
  const ws: Workspace = { files, constructions, escaping, returning, callables };
  for (const c of constructions) {
    const doubled = scales(c.item) ? doubledLoss(ws, c) : undefined;
    if (doubled) out.set(c.path, [...(out.get(c.path) ?? []), doubled]);
  }

  for (const [path, facts] of files) {
    if (isTest(path)) continue;
    for (const step of facts.steps) {
      const sources = scheduleSources(path, step, ws);
      if (sources.length === 0 || !sources.every((c) => scales(c.item))) continue;
      const loop = repeatingLoop(facts, step);
      if (!loop) continue;
      for (const c of sources) {
        const list = out.get(c.path) ?? [];
        if (
          list.some(
            (f) => f.range.startLine === c.item.range.startLine && f.range.startColumn === c.item.range.startColumn,
          )
        )
          continue;
        out.set(c.path, [...list, finding(c, { path, item: step }, { path, item: loop })]);
      }
    }
  }
  return out;
}

function scales(c: Construction): boolean {
  return c.scaling === 'default' || c.scaling === 'true';
}

/** The construction's variable is returned by its function (as the schedule, or an item of a returned tuple). */
function escapes(facts: PipelineFacts, c: Construction): boolean {
  return facts.returnedCalls.some((r) => r.fn === c.fn && r.callee === c.callee && r.calleeIndex === -1);
}

/** Functions that return a schedule, by name: annotated, or returning a construction or such a function's result. */
function returningFunctions(files: ReadonlyMap<string, PipelineFacts>): Map<string, Position> {
  const out = new Map<string, Position>();
  for (const f of files.values()) {
    for (const [name, p] of f.annotatedReturns) out.set(name, p);
    for (const c of f.constructions)
      if (c.fn && escapes(f, c)) {
        const r = f.returnedCalls.find((x) => x.fn === c.fn && x.callee === c.callee);
        if (r && !out.has(c.fn)) out.set(c.fn, r.index);
      }
  }
  for (let round = 0; round < 4; round++)
    for (const f of files.values())
      for (const r of f.returnedCalls) {
        const p = out.get(r.callee);
        if (p !== undefined && p === r.calleeIndex && !out.has(r.fn)) out.set(r.fn, r.index);
      }
  return out;
}

/**
 * The constructions the receiver of a `.step()` can hold: the one assigned to it in the same function; those the
 * function it is assigned from returns (followed through the functions that return its result); or, when it is
 * assigned the result of a callable annotated to return a schedule (`pipelining_fn: PipeliningFunction`), the
 * schedules returned by functions annotated the same way, provided every schedule that leaves its function
 * scales. Empty when the receiver is not proven to hold a schedule.
 */
function scheduleSources(path: string, step: StepCall, ws: Workspace): Located<Construction>[] {
  const facts = ws.files.get(path)!;
  const self = step.receiver.startsWith('self.');
  const local = ws.constructions.filter(
    (c) => c.path === path && c.item.variable === step.receiver && !self && c.item.fn === step.fn,
  );
  if (local.length > 0) return local;
  for (const h of facts.holders) {
    if (self ? h.cls !== step.cls : h.fn !== step.fn) continue;
    const index = h.targets.indexOf(step.receiver);
    if (index < 0) continue;
    const matches = (p: Position | undefined): boolean => p !== undefined && (h.tuple ? p === index : p === -1);
    if (matches(ws.returning.get(h.callee))) {
      const traced = tracedConstructions(ws, h.callee, 0);
      if (traced.length > 0) return traced;
    }
    if (matches(ws.returning.get(h.callee)) || matches(ws.callables.get(h.callee))) {
      if (!ws.escaping.every((c) => scales(c.item))) return [];
      return ws.escaping.filter(
        (c) => c.item.fn !== undefined && ws.files.get(c.path)!.annotatedReturns.has(c.item.fn),
      );
    }
  }
  return [];
}

/** The constructions a function returns, directly or through the functions whose result it returns. */
function tracedConstructions(ws: Workspace, fn: string, depth: number): Located<Construction>[] {
  if (depth > 4) return [];
  const out = ws.escaping.filter((c) => c.item.fn === fn);
  for (const f of ws.files.values())
    for (const r of f.returnedCalls)
      if (r.fn === fn && r.callee !== fn && ws.returning.has(r.callee))
        out.push(...tracedConstructions(ws, r.callee, depth + 1));
  return [...new Set(out)];
}

/** The loop that runs the step several times before one optimizer step: around it, or around a call of its method. */
function repeatingLoop(facts: PipelineFacts, step: StepCall): AccumulationLoop | undefined {
  return facts.loops.find((loop) => {
    if (loop.fn === step.fn && loop.cls === step.cls && loop.steps.has(step.receiver))
      return loop.line <= step.line && step.line <= loop.optimizerStep!.line;
    if (!step.fn || step.fn === loop.fn) return false;
    return step.cls !== undefined
      ? loop.cls === step.cls && loop.calls.has(`self.${step.fn}`)
      : loop.calls.has(step.fn);
  });
}

/**
 * `loss_fn=wrap(loss_fn, n_microbatches)` where `wrap` returns a closure that divides the loss by that argument,
 * on a schedule that also scales the gradients: the mean over the micro-batches is taken twice.
 */
function doubledLoss(ws: Workspace, c: Located<Construction>): Finding | undefined {
  const wrapper = c.item.lossWrapper;
  const count = c.item.microbatches?.replace(/\s+/g, '');
  if (!wrapper || !count) return undefined;
  for (const [path, f] of ws.files) {
    const divider = f.lossDividers.get(wrapper.callee);
    if (!divider || wrapper.args[divider.index] !== count) continue;
    const keeps = c.item.scaling === 'true' ? 'passes `scale_grads=True`' : 'leaves `scale_grads` at its default, True';
    const message =
      `The loss given to this torch pipeline schedule is divided by \`${c.item.microbatches}\` (\`${wrapper.callee}\`), and the schedule ${keeps}, so every \`step()\` also divides all \`.grad\` by \`n_microbatches\`: ` +
      `the mean over the micro-batches is taken twice, and the effective learning rate is 1/n_microbatches of the configured one. Pass \`scale_grads=False\` or give the undivided loss.`;
    const related: RelatedLocation[] = [
      { range: wrapper.range, message: `\`${wrapper.callee}(…)\` wraps the loss` },
      {
        range: divider.range,
        message: `the wrapped loss is divided by the wrapper's argument \`${wrapper.args[divider.index]}\``,
        ...(path === c.path ? {} : { file: path }),
      },
    ];
    return { code: 'CP002', severity: ruleInfo('CP002').severity, range: c.item.range, message, related, fixes: [] };
  }
  return undefined;
}

function finding(c: Located<Construction>, step: Located<StepCall>, loop: Located<AccumulationLoop>): Finding {
  const count = c.item.microbatches;
  const m = count && count !== 'n_microbatches' ? `\`n_microbatches\` (\`${count}\`)` : '`n_microbatches`';
  const keeps = c.item.scaling === 'true' ? 'passes `scale_grads=True`' : 'leaves `scale_grads` at its default, True';
  const window = `\`${loop.item.count}\``;
  const message =
    `This torch pipeline schedule ${keeps}: every \`step()\` divides all \`.grad\` of its stages by ${m}, the gradients already accumulated included; ` +
    `\`${step.item.receiver}.step()\` runs ${window} times before one \`${loop.item.optimizerStep!.text}\`, so the gradients summed over the micro-batches of each step are divided by the micro-batch count once more at every later step of the window: ` +
    `the k-th of K steps weighs 1/n_microbatches^(K−k+1) instead of 1/n_microbatches, and the effective learning rate of all but the last step shrinks geometrically (K = 1 is unaffected). ` +
    'Pass `scale_grads=False` and divide the loss by the micro-batch count instead.';
  const at = (path: string, message: string, range: Finding['range']): RelatedLocation => ({
    range,
    message,
    ...(path === c.path ? {} : { file: path }),
  });
  const related: RelatedLocation[] = [
    at(
      step.path,
      `\`${step.item.receiver}.step()\`: the schedule runs its micro-batches and scales the gradients`,
      step.item.range,
    ),
    at(
      loop.path,
      `the step runs ${window} times in this loop, which neither clears the gradients nor steps an optimizer`,
      loop.item.range,
    ),
    at(loop.path, 'one optimizer step after the loop', loop.item.optimizerStep!.range),
  ];
  return { code: 'CP002', severity: ruleInfo('CP002').severity, range: c.item.range, message, related, fixes: [] };
}
