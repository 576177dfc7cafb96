// Chooses which top-level statements to copy out of the WebAssembly tree. Copying costs about a microsecond per
// node, so a 3,000-line script with many model and data classes would spend most of the time budget on code
// that cannot matter. A statement is kept when its text mentions a collective, a world size, a backward pass or
// a learning rate, or when it defines a function a kept statement calls (and the other way round), or assigns, at
// the top level, a name a kept statement calls.
const RELEVANT =
  /all_reduce|all_sum|push_pull|allreduce|Allreduce|reduce\(|reduce_scatter|grads?\b|psum|pmean|DistributedOptimizer|DistributedGradientTape|DistributedDataParallel|\bDDP\b|FullyShardedDataParallel|\bFSDP\b|fully_shard|deepspeed|accelerat|strategy|backward|autograd|value_and_grad|\bgrad\(|gradient\(|apply_gradients|ReduceOp|gloo|world_size|get_world_size|\bhvd\b|horovod|per_node|device_count|local_size|Get_size|num_replicas|spawn|\.grad\b|\blr\b|learning_rate|num_items_in_batch|^\s*(import|from)\s/m;

/**
 * Every finding starts from a call with one of these names (the last name of the callee, as Syntax.calleeName
 * reads it): a reduction (reductions.ts), a wrapper that reduces for the user (DDP, FSDP, fully_shard, Horovod's
 * DistributedOptimizer and DistributedGradientTape, deepspeed.initialize, Accelerate's prepare), a TF strategy's
 * run, a backward pass (backward, autograd.grad, tape.gradient, jax grad/value_and_grad: the implicit rules and
 * CP008), or fairseq's `multiply_grads` (unreduced-world-multiplier.ts). A file that calls none of them cannot produce a finding, so it is not parsed at all. A rule that starts
 * from another call must add it here; test/unit/analysis/prefilter.test.ts checks the call names written in
 * reductions.ts, implicit.ts, losses.ts and unreduced-world-multiplier.ts against this list.
 */
const TRIGGER_CALLS =
  /\b(all_reduce\w*|reduce|reduce_multigpu|reduce_scatter\w*|_reduce_scatter_base|allreduce\w*|grouped_allreduce_?|Allreduce|Reduce|Iallreduce|psum|pmean|psum_scatter|all_sum|push_pull\w*|DistributedDataParallel|DDP|FullyShardedDataParallel|FSDP|fully_shard|DistributedOptimizer|DistributedGradientTape|backward|grad|value_and_grad|gradient|apply_gradients|multiply_grads)\s*\(|deepspeed\s*\.\s*initialize\s*\(/;

/** False when the text calls nothing a rule starts from (see TRIGGER_CALLS): a cheap scan that spares the parse. */
export function mayHaveFindings(text: string): boolean {
  if (TRIGGER_CALLS.test(text)) return true;
  // The Trainer's `compute_loss(..., num_items_in_batch)` contract (token-weighting.ts) calls nothing of the above.
  if (/\bdef\s+compute_loss\b/.test(text) && /\bnum_items_in_batch\b/.test(text)) return true;
  // Accelerate: `accelerator.prepare(...)`; a TF strategy: `strategy.run(step_fn, ...)`.
  if (/accelerat/i.test(text) && /\bprepare\s*\(/.test(text)) return true;
  return /strategy/i.test(text) && /\b(run|experimental_run|experimental_run_v2)\s*\(/.test(text);
}

export interface Unit {
  readonly start: number;
  readonly end: number;
  /** Names this unit defines (a def or class name), for the call-graph closure. */
  readonly defines?: string;
  /** The name a plain top-level assignment binds (`model = GPT(...)`), kept when a kept statement calls it. */
  readonly assigns?: string;
}

export function selectUnits(text: string, units: readonly Unit[]): boolean[] {
  const keep = units.map((u) => RELEVANT.test(text.slice(u.start, u.end)));
  for (let round = 0; round < 3; round++) {
    let changed = false;
    const keptText = units
      .filter((_, i) => keep[i])
      .map((u) => text.slice(u.start, u.end))
      .join('\n');
    // Read once per round rather than once per statement (a regular expression each): the names the kept text
    // calls (`name(` at the start of a word), and one pattern for "calls a name a kept statement defines".
    const calledInKept = new Set<string>();
    for (const m of keptText.matchAll(/\b(\w+)\s*\(/g)) calledInKept.add(m[1]);
    const keptNames = units.filter((u, i) => keep[i] && u.defines).map((u) => u.defines!);
    const callsKept = keptNames.length > 0 ? new RegExp(`(?:${keptNames.join('|')})\\(`) : undefined;
    units.forEach((u, i) => {
      if (keep[i]) return;
      // A called object built at the top level (`model = GPT(...)`, then `model(x).backward()`) is kept with its
      // assignment, so the rules can read what calling it computes (summed-loss.ts).
      const calledHere = (name: string | undefined) => name !== undefined && calledInKept.has(name);
      if (calledHere(u.defines) || calledHere(u.assigns) || callsKept?.test(text.slice(u.start, u.end))) {
        keep[i] = true;
        changed = true;
      }
    });
    if (!changed) break;
  }
  return keep;
}

const CONTINUES = /^(else|elif|except|finally)\b/;

/**
 * Splits Python source into top-level statements without parsing: a statement starts on a line that begins at
 * column 0 outside brackets, strings and backslash continuations. Decorators and column-0 comments stay with the
 * statement below them, and else/elif/except/finally with the one above.
 */
export function splitTopLevel(text: string): Unit[] {
  const units: Unit[] = [];
  let depth = 0;
  let quote = '';
  let continued = false;
  let unitStart = -1;
  let commentStart = -1;
  let afterDecorator = false;
  const close = (end: number) => {
    if (unitStart < 0) return;
    let e = end;
    while (e > unitStart && /\s/.test(text[e - 1])) e--;
    const body = text.slice(unitStart, e).replace(/^(?:[ \t]*#[^\n]*\n)*/, '');
    const m = /^(?:async\s+)?(?:def|class)\s+(\w+)/m.exec(body);
    const assigned = /^([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)/.exec(body);
    // Keep the line break: included ranges are parsed as one stream, and statements need their newline.
    if (text[e] === '\r') e++;
    if (text[e] === '\n') e++;
    units.push({ start: unitStart, end: e, defines: m?.[1], assigns: assigned?.[1] });
    unitStart = -1;
  };
  let i = 0;
  while (i < text.length) {
    const lineStart = i;
    if (depth === 0 && quote === '' && !continued) {
      const ch = text[i];
      if (ch === '#') {
        if (commentStart < 0) commentStart = lineStart;
      } else if (ch !== ' ' && ch !== '\t' && ch !== '\n' && ch !== '\r') {
        if (!afterDecorator && !CONTINUES.test(text.slice(i, i + 8))) {
          close(commentStart >= 0 ? commentStart : lineStart);
          unitStart = commentStart >= 0 ? commentStart : lineStart;
        }
        commentStart = -1;
        afterDecorator = ch === '@';
      } else if (
        ch !== '\n' &&
        ch !== '\r' &&
        text.slice(i, text.indexOf('\n', i) < 0 ? text.length : text.indexOf('\n', i)).trim() !== ''
      ) {
        commentStart = -1;
      }
    }
    // Scan the rest of the line, tracking brackets and strings (triple-quoted ones span lines).
    let lastCode = '';
    while (i < text.length && text[i] !== '\n') {
      const c = text[i];
      if (quote !== '') {
        if (c === '\\') i++;
        else if (text.startsWith(quote, i)) {
          i += quote.length - 1;
          quote = '';
        }
      } else if (c === '#') {
        while (i < text.length && text[i] !== '\n') i++;
        break;
      } else if (c === '"' || c === "'") {
        quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
        i += quote.length - 1;
      } else if (c === '(' || c === '[' || c === '{') depth++;
      else if ((c === ')' || c === ']' || c === '}') && depth > 0) depth--;
      if (c !== ' ' && c !== '\t' && c !== '\r') lastCode = c;
      i++;
    }
    if (quote.length === 1) quote = '';
    continued = quote === '' && lastCode === '\\';
    i++;
  }
  close(text.length);
  return units;
}
