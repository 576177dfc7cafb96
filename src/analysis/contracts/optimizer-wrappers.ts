// An optimizer wrapper that divides the gradients twice (CP002): its step path (wrapper-step-path.ts) divides each
// `p.grad` by a batch size it was given at construction, then sums each gradient over all ranks and divides it by
// the world size. That is the mean over the ranks only when the batch it divided by is one rank's own; a batch of
// all ranks makes the applied gradient 1/N of the mean (opacus' `DistributedDPOptimizer` given the global
// `expected_batch_size`, fixed in 95fdb35). Reported at the batch size, where a construction in view passes a value
// proven to be the global batch (sharded-loader.ts); the wrapper's classes may be in other files, found through the
// imports (the program's module index), and their methods are resolved along the bases.
import type { Parser } from 'web-tree-sitter';
import { child, hasSplat, unparen, type PyNode } from '../tree';
import { FileModel, type FunctionInfo } from '../scope';
import { Syntax } from '../syntax';
import { parseModule } from '../parse';
import { isShardedGlobalBatch } from '../sharded-loader';
import type { Finding } from '../types';
import { findMethod, stepPath, type ChainClass } from './wrapper-step-path';
import { constructorFed, keywordOnly, RANK_COUNT, wrapperClaim, type WrapperClaim } from './wrapper-claim';
import { globalBatchOnPath } from './wrapper-loader';
import { wrapperFinding } from './wrapper-finding';
import {
  atSite,
  callContexts,
  factoryChoice,
  onlyAssignment,
  type Assumed,
  type CallContext,
  type ContextValue,
  type FactoryChoice,
} from './wrapper-factory';

const PARSE_BUDGET_MS = 2_000;
/** How many re-exports (`from .optimizer import DPOptimizer` in a package's `__init__.py`) a class name is followed. */
const MAX_REEXPORTS = 3;
/** The base classes followed up from a wrapper. */
const MAX_CHAIN = 6;

interface Proof {
  readonly chain: ChainClass[];
  readonly claim: WrapperClaim;
  readonly argument: ContextValue;
  readonly choice?: FactoryChoice;
  /** The names taken to be true on the path the proof holds on. */
  readonly assumed?: Assumed;
}

interface Entry {
  readonly text: string;
  /** Constructs objects with a batch made from a sharded loader's length (the only divisor the rule can prove). */
  readonly mayConstruct: boolean;
  model?: FileModel | null;
}

export class OptimizerWrapperIndex {
  private readonly files = new Map<string, Entry>();

  constructor(
    private readonly parser: Parser,
    private readonly resolveModule: (from: string, module: string) => string | undefined,
  ) {}

  setFile(path: string, text: string): void {
    if (this.files.get(path)?.text === text) return;
    this.files.set(path, {
      text,
      mayConstruct:
        (/Distributed\w*Sampler/.test(text) && /\blen\s*\(/.test(text)) ||
        /\blen\s*\(\s*[\w.]+\.dataset\s*\)/.test(text),
    });
  }

  removeFile(path: string): void {
    this.files.delete(path);
  }

  /** CP002 findings at batch sizes of all ranks given to a wrapper that also divides by the world size, by file. */
  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    const out = new Map<string, Finding[]>();
    for (const [path, entry] of this.files) {
      if (!entry.mayConstruct || !wanted.has(path) || isTest(path)) continue;
      const model = this.modelOf(path);
      if (!model) continue;
      for (const fn of model.functions) {
        for (const call of fn.calls) {
          const found = this.judgeConstruction(path, model, fn, call);
          if (found.length > 0) out.set(path, [...(out.get(path) ?? []), ...found]);
        }
      }
    }
    return out;
  }

  /**
   * The step path of class `className` of `path` (through its workspace bases) runs the gradient reduction in its
   * method `method` and divides each gradient by a batch size the wrapper was given at construction (opacus'
   * `DPOptimizer.scale_grad`): the sum over the ranks is then divided by whatever batch the construction passes, so
   * the sum alone proves no N× factor (a batch of all ranks makes it the mean).
   */
  stepDividesByConstructedBatch(path: string, className: string, method: string): boolean {
    const model = this.modelOf(path);
    if (!model || model.classBasesOf(className) === undefined) return false;
    const chain = this.chainOf({ path, name: className, model });
    const steps = chain && stepPath(chain);
    if (!chain || !steps || steps.unknown || !steps.updates) return false;
    const reduced = steps.events.some(
      (e) => e.kind === 'reduce' && e.path === path && e.className === className && e.method === method,
    );
    return (
      reduced &&
      steps.events.some(
        (e) =>
          e.kind === 'divide' && e.factors.some((f) => !RANK_COUNT.test(f) && constructorFed(chain, f) !== undefined),
      )
    );
  }

  private judgeConstruction(path: string, model: FileModel, fn: FunctionInfo, call: PyNode): Finding[] {
    const callee = child(call, 'function');
    if (!callee || (callee.type !== 'identifier' && callee.type !== 'attribute')) return [];
    const args = model.syntax.args(call);
    if (hasSplat(args.list)) return [];
    const out: Finding[] = [];
    // Each call of the enclosing method from its class is judged on its own: the batch and the class may be its
    // parameters, and a finding at one call holds for that call.
    for (const ctx of callContexts(model, fn)) {
      for (const proof of this.proofs(path, model, callee, args, ctx)) {
        const { chain, claim, argument, choice, assumed } = proof;
        const found = wrapperFinding(
          path,
          model,
          argument.ctx.fn,
          argument.node,
          chain[0].name,
          claim,
          choice,
          assumed,
        );
        // Contexts that do not change the batch's value prove the same finding at the same place.
        const at = (f: Finding) => `${f.range.startLine}:${f.range.startColumn}`;
        if (!out.some((f) => at(f) === at(found))) out.push(found);
      }
    }
    return out;
  }

  /**
   * The wrapper a construction builds and the batch it is given, where the batch is the one of all ranks: proven
   * outright, or on the path where a flag is true (wrapper-loader.ts), the class then chosen on that same path.
   */
  private proofs(
    path: string,
    model: FileModel,
    callee: PyNode,
    args: ReturnType<FileModel['syntax']['args']>,
    ctx: CallContext,
  ): Proof[] {
    const judged = (assumed?: Assumed): Proof | undefined => {
      const built = this.constructedClass(path, model, callee, ctx, assumed);
      const chain = built && this.chainOf(built.cls);
      const path0 = chain && stepPath(chain);
      const claim = chain && path0 && wrapperClaim(chain, path0);
      const param = chain && claim && constructorParameter(chain, claim);
      if (!chain || !claim || !param) return undefined;
      const written = args.keywords.get(param.name)?.value ?? args.positional[param.index - 1];
      const argument = written && atSite(model, { node: written, ctx });
      return argument ? { chain, claim, argument, choice: built.choice } : undefined;
    };
    const plain = judged();
    if (plain) return isShardedGlobalBatch(model, plain.argument.node, plain.argument.ctx.fn) ? [plain] : [];
    if (callee.type !== 'identifier' || /^[A-Z]/.test(model.syntax.text(callee))) return [];
    // The class is not decided without a path: try each argument as a batch proven on one, then the class on it.
    const out: Proof[] = [];
    const resolve = (p: string, m: FileModel, name: string) => this.resolveClass(p, m, name, 0);
    for (const written of [...args.positional, ...[...args.keywords.values()].map((k) => k.value)]) {
      const argument = atSite(model, { node: written, ctx });
      const assumed = argument && globalBatchOnPath(path, model, argument.node, argument.ctx.fn, resolve);
      const proof = assumed && judged(assumed);
      if (
        proof &&
        argument &&
        proof.argument.node.start === argument.node.start &&
        proof.argument.ctx.fn === argument.ctx.fn
      )
        out.push({ ...proof, assumed });
    }
    return out;
  }

  /**
   * The class a construction builds: the class its callee names, or the class a factory function returns for the
   * arguments of the one call the callee name is assigned (`optim_class = get_optimizer_class(...)`).
   */
  private constructedClass(
    path: string,
    model: FileModel,
    callee: PyNode,
    ctx: CallContext,
    assumed?: Assumed,
  ): { cls: ChainClass; choice?: FactoryChoice } | undefined {
    const name = model.syntax.text(callee).replace(/\s+/g, '');
    if (/^[A-Z]/.test(name.slice(name.lastIndexOf('.') + 1))) {
      const cls = this.resolveClass(path, model, name, 0);
      return cls && { cls };
    }
    if (callee.type !== 'identifier') return undefined;
    const value = onlyAssignment(model, ctx.fn, name);
    const factoryCall = value && unparen(value);
    if (factoryCall?.type !== 'call') return undefined;
    const factoryName = child(factoryCall, 'function');
    if (factoryName?.type !== 'identifier') return undefined;
    const factory = this.resolveFunction(path, model, model.syntax.text(factoryName), 0);
    if (!factory) return undefined;
    const choice = factoryChoice(factory.model, factory.fn, model, { node: factoryCall, ctx }, assumed);
    const cls = choice && this.resolveClass(factory.path, factory.model, choice.className, 0);
    return cls && { cls, choice };
  }

  /** A module-level function a name denotes in a file: defined there, or imported (through a few re-exports). */
  private resolveFunction(
    path: string,
    model: FileModel,
    name: string,
    depth: number,
  ): { path: string; model: FileModel; fn: FunctionInfo } | undefined {
    if (depth > MAX_REEXPORTS) return undefined;
    const defined = (model.byName.get(name) ?? []).filter((f) => !f.className && f.enclosing?.node.type === 'module');
    if (defined.length > 1) return undefined;
    if (defined.length === 1) return { path, model, fn: defined[0] };
    const dotted = model.moduleOf(name);
    const cut = dotted?.lastIndexOf('.') ?? -1;
    if (!dotted || cut <= 0) return undefined;
    const file = this.resolveModule(path, dotted.slice(0, cut));
    const target = file ? this.modelOf(file) : undefined;
    return file && target ? this.resolveFunction(file, target, dotted.slice(cut + 1), depth + 1) : undefined;
  }

  /** The class a name denotes in a file: defined there, or imported (through at most a few re-exports). */
  private resolveClass(path: string, model: FileModel, name: string, depth: number): ChainClass | undefined {
    if (depth > MAX_REEXPORTS) return undefined;
    if (!name.includes('.') && model.classBasesOf(name) !== undefined) return { path, name, model };
    const head = name.split('.')[0];
    const imported = model.moduleOf(head);
    if (!imported) return undefined;
    const dotted = imported + name.slice(head.length);
    const cut = dotted.lastIndexOf('.');
    if (cut <= 0) return undefined;
    const file = this.resolveModule(path, dotted.slice(0, cut));
    const target = file ? this.modelOf(file) : undefined;
    return file && target ? this.resolveClass(file, target, dotted.slice(cut + 1), depth + 1) : undefined;
  }

  /** The class and its workspace bases in resolution order; undefined where two bases are the workspace's. */
  private chainOf(first: ChainClass): ChainClass[] | undefined {
    const chain = [first];
    for (let c = first; chain.length < MAX_CHAIN;) {
      const bases = (c.model.classBasesOf(c.name) ?? [])
        .map((b) => this.resolveClass(c.path, c.model, b, 0))
        .filter((b): b is ChainClass => b !== undefined);
      if (bases.length === 0) return chain;
      if (bases.length > 1 || chain.some((k) => k.path === bases[0].path && k.name === bases[0].name)) return undefined;
      chain.push(bases[0]);
      c = bases[0];
    }
    return undefined;
  }

  private modelOf(path: string): FileModel | undefined {
    const entry = this.files.get(path);
    if (!entry) return undefined;
    if (entry.model === undefined) {
      try {
        const parsed = parseModule(this.parser, entry.text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
        entry.model = 'module' in parsed ? new FileModel(parsed.module, new Syntax(parsed.source)) : null;
      } catch {
        entry.model = null;
      }
    }
    return entry.model ?? undefined;
  }
}

/**
 * The parameter of the wrapper's own constructor that reaches the attribute it divides by: the base `__init__`'s
 * parameter, carried down through each subclass's `super().__init__(…, name=param)` (or the same position).
 */
function constructorParameter(
  chain: readonly ChainClass[],
  claim: WrapperClaim,
): { name: string; index: number } | undefined {
  let param: { name: string; index: number } = claim.parameter;
  for (let i = claim.initIndex - 1; i >= 0; i--) {
    const init = findMethod(chain, i, '__init__');
    if (!init || init.index > i) continue;
    const s = chain[i].model.syntax;
    const calls = init.fn.calls.filter((c) => s.calleeText(c) === 'super().__init__');
    if (calls.length !== 1) return undefined;
    const args = s.args(calls[0]);
    if (hasSplat(args.list)) return undefined;
    const passed = args.keywords.get(param.name)?.value ?? args.positional[param.index - 1];
    if (!passed || unparen(passed).type !== 'identifier') return undefined;
    const own = init.fn.params.find((p) => p.name === s.text(unparen(passed)));
    if (!own) return undefined;
    param = { name: own.name, index: keywordOnly(own) ? -1 : own.index };
  }
  return param;
}
